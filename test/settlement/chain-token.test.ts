// The EIP-3009 test token on a real local EVM (anvil): the committed artifact is what the source compiles to; the
// token placed at the sandbox USDC/EURC addresses answers with the domain the service signs for; it behaves like
// Circle's FiatTokenV2_2 for transferWithAuthorization, receiveWithAuthorization and cancelAuthorization; and the
// official @x402/evm facilitator verifies and settles a payment signed by the service's own signer on it.
//
// One anvil for the file; tests run concurrently, each paying from its own fresh account.
import { readFileSync } from 'node:fs';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { eip3009ABI, toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import test, { type ExecutionContext } from 'ava';
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  type Log,
  type VerifyTypedDataParameters,
  concat,
  createWalletClient,
  decodeFunctionData,
  hashDomain,
  http,
  numberToHex,
  parseEventLogs,
  parseSignature,
  parseTransaction,
  publicActions,
  toHex,
} from 'viem';
import { privateKeyToAccount, signTypedData } from 'viem/accounts';
import {
  ARTIFACT_PATH,
  MULTICALL_ARTIFACT_PATH,
  artifactText,
  compileMulticall,
  compileToken,
} from '../../contracts/build.js';
import { NETWORKS } from '../../shared/assets.js';
import {
  type TransferAuthorization,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  authorizationDomain,
  randomNonce,
} from '../../shared/protocols/eip3009.js';
import { choosePayment, signPayment } from '../../shared/protocols/payment.js';
import {
  type Anvil,
  type DevAccount,
  TOKEN_ABI,
  type TokenHandle,
  chainTime,
  deploySandboxTokens,
  deployToken,
  freshAccount,
  increaseTime,
  startAnvil,
  tokenArtifact,
} from '../support/anvil.js';

const SANDBOX = NETWORKS.sandbox;
const CHAIN_ID = SANDBOX.chainId;

let anvil: Anvil | undefined;
let tokens: Record<'USDC' | 'EURC', TokenHandle> | undefined;

test.before(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  tokens = await deploySandboxTokens(anvil);
});

test.after.always(async () => {
  await anvil?.stop();
});

function chain(): { anvil: Anvil; usdc: TokenHandle; eurc: TokenHandle } {
  if (anvil === undefined || tokens === undefined) throw new Error('anvil not started');
  return { anvil, usdc: tokens.USDC, eurc: tokens.EURC };
}

// EIP-3009's other two typed structs, as FiatTokenV2_2 hashes them.
const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
} as const;
const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

const FAR_FUTURE = 2n ** 40n;

/** An authorization from `from` valid from the start of time until FAR_FUTURE unless overridden. */
function authorization(
  from: Address,
  to: Address,
  value: bigint,
  over: Partial<TransferAuthorization> = {},
): TransferAuthorization {
  return { from, to, value, validAfter: 0n, validBefore: FAR_FUTURE, nonce: randomNonce(), ...over };
}

function signTransfer(key: Hex, token: TokenHandle, auth: TransferAuthorization): Promise<Hex> {
  return signTypedData({
    privateKey: key,
    domain: authorizationDomain(token.eip712Token, CHAIN_ID),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authMessage(auth),
  });
}

function signReceive(key: Hex, token: TokenHandle, auth: TransferAuthorization): Promise<Hex> {
  return signTypedData({
    privateKey: key,
    domain: authorizationDomain(token.eip712Token, CHAIN_ID),
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: 'ReceiveWithAuthorization',
    message: authMessage(auth),
  });
}

function authMessage(auth: TransferAuthorization) {
  return {
    from: auth.from as Address,
    to: auth.to as Address,
    value: auth.value,
    validAfter: auth.validAfter,
    validBefore: auth.validBefore,
    nonce: auth.nonce,
  };
}

function authArgs(auth: TransferAuthorization) {
  return [auth.from as Address, auth.to as Address, auth.value, auth.validAfter, auth.validBefore, auth.nonce] as const;
}

/** The signature as FiatToken's v,r,s overloads take it. */
function vrs(signature: Hex): readonly [number, Hex, Hex] {
  const { v, r, s } = parseSignature(signature);
  if (v === undefined) throw new Error('signature without v');
  return [Number(v), r, s];
}

/** Submits transferWithAuthorization (v,r,s overload unless `bytes`) from `submitter`; resolves to the receipt. */
async function submitTransfer(
  a: Anvil,
  submitter: DevAccount,
  token: TokenHandle,
  auth: TransferAuthorization,
  signature: Hex,
  overload: 'vrs' | 'bytes' = 'vrs',
) {
  const w = a.wallet(submitter.privateKey);
  const hash =
    overload === 'vrs'
      ? await w.writeContract({
          address: token.address,
          abi: TOKEN_ABI,
          functionName: 'transferWithAuthorization',
          args: [...authArgs(auth), ...vrs(signature)],
        })
      : await w.writeContract({
          address: token.address,
          abi: TOKEN_ABI,
          functionName: 'transferWithAuthorization',
          args: [...authArgs(auth), signature],
        });
  return w.waitForTransactionReceipt({ hash });
}

/** `attempt` is refused with exactly this revert reason (viem decodes Error(string) from the gas estimate). */
async function reverts(t: ExecutionContext, attempt: Promise<unknown>, reason: string): Promise<void> {
  const err = await t.throwsAsync(attempt);
  const revert = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
  if (!(revert instanceof ContractFunctionRevertedError)) {
    t.fail(`expected revert "${reason}", got: ${err?.message}`);
    return;
  }
  t.is(revert.reason, reason);
}

function authorizationEvents(logs: readonly Log[], token: TokenHandle) {
  return parseEventLogs({
    abi: TOKEN_ABI,
    logs: logs.filter((l) => l.address.toLowerCase() === token.address.toLowerCase()),
  });
}

/** A payer holding `amount` of `token`, a payee and a funded third account that submits. */
async function parties(token: TokenHandle, amount: bigint) {
  const { anvil: a } = chain();
  const [payer, payee, submitter] = await Promise.all([freshAccount(a, 0n), freshAccount(a, 0n), freshAccount(a)]);
  await token.mint(payer.address, amount);
  return { a, payer, payee, submitter };
}

// ---------------------------------------------------------------------------------------------------------------
// The artifact

test('the committed artifacts are exactly what the sources compile to (npm run contracts:build)', (t) => {
  const fresh = compileToken();
  t.is(readFileSync(ARTIFACT_PATH, 'utf8'), artifactText(fresh));
  t.regex(fresh.solcVersion, /^0\.8\.37\+/);
  t.is(readFileSync(MULTICALL_ARTIFACT_PATH, 'utf8'), artifactText(compileMulticall()));
});

/** name(inputs)->(outputs) of every function in an ABI. */
function functionSignatures(abi: Abi): Set<string> {
  const sigs = new Set<string>();
  for (const item of abi) {
    if (item.type !== 'function') continue;
    const types = (params: readonly { type: string }[]) => params.map((p) => p.type).join(',');
    sigs.add(`${item.name}(${types(item.inputs)})->(${types(item.outputs)})`);
  }
  return sigs;
}

test("the token has every function @x402/evm's facilitator calls and every one the helpers use", (t) => {
  const have = functionSignatures(tokenArtifact().abi);
  for (const sig of functionSignatures(eip3009ABI)) t.true(have.has(sig), `x402 eip3009ABI: ${sig}`);
  for (const sig of functionSignatures(TOKEN_ABI)) t.true(have.has(sig), `TOKEN_ABI: ${sig}`);
  const events = new Set(tokenArtifact().abi.flatMap((i) => (i.type === 'event' ? [i.name] : [])));
  t.deepEqual([...events].sort(), ['Approval', 'AuthorizationCanceled', 'AuthorizationUsed', 'Transfer']);
});

test("the helper's dev accounts are anvil's own", async (t) => {
  const { anvil: a } = chain();
  const accounts = await createWalletClient({ chain: a.chain, transport: http(a.url) }).getAddresses();
  t.deepEqual(
    a.accounts.map((x) => x.address.toLowerCase()),
    accounts.map((x) => x.toLowerCase()),
  );
  for (const x of a.accounts) t.is(privateKeyToAccount(x.privateKey).address, x.address);
});

// ---------------------------------------------------------------------------------------------------------------
// The token at the service's addresses

test('at the sandbox USDC and EURC addresses: name, symbol, version, decimals and the domain the service signs for', async (t) => {
  const { anvil: a } = chain();
  for (const asset of SANDBOX.assets) {
    const read = <F extends 'name' | 'symbol' | 'version'>(functionName: F) =>
      a.publicClient.readContract({ address: asset.address, abi: TOKEN_ABI, functionName });
    t.is(await read('name'), asset.eip712.name);
    t.is(await read('symbol'), asset.symbol);
    t.is(await read('version'), asset.eip712.version);
    t.is(await a.publicClient.readContract({ address: asset.address, abi: TOKEN_ABI, functionName: 'decimals' }), 6);
    const separator = await a.publicClient.readContract({
      address: asset.address,
      abi: TOKEN_ABI,
      functionName: 'DOMAIN_SEPARATOR',
    });
    const domain = authorizationDomain(asset, CHAIN_ID);
    t.is(
      separator,
      hashDomain({
        domain: { ...domain, chainId: BigInt(domain.chainId) },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    );
  }
  t.deepEqual(
    SANDBOX.assets.map((x) => x.address),
    [chain().usdc.address, chain().eurc.address],
  );
});

test('mint: only the minter, and it moves totalSupply', async (t) => {
  const { anvil: a, eurc } = chain();
  const outsider = await freshAccount(a);
  const before = await a.publicClient.readContract({
    address: eurc.address,
    abi: TOKEN_ABI,
    functionName: 'totalSupply',
  });
  await eurc.mint(outsider.address, 7n);
  t.is(await eurc.balanceOf(outsider.address), 7n);
  t.true(
    (await a.publicClient.readContract({ address: eurc.address, abi: TOKEN_ABI, functionName: 'totalSupply' })) >=
      before + 7n,
  );
  await reverts(
    t,
    a.wallet(outsider.privateKey).writeContract({
      address: eurc.address,
      abi: TOKEN_ABI,
      functionName: 'mint',
      args: [outsider.address, 1n],
    }),
    'FiatToken: caller is not a minter',
  );
});

test('deployToken: the copied code signs for its own address, and a minter outside the dev accounts can mint', async (t) => {
  const { anvil: a, usdc } = chain();
  const [where, minter, holder] = await Promise.all([freshAccount(a, 0n), freshAccount(a, 0n), freshAccount(a, 0n)]);
  const copy = await deployToken(a, {
    at: where.address,
    name: 'USDC',
    symbol: 'USDC',
    version: '2',
    minter: minter.address,
  });
  const separatorAt = (address: Address) =>
    a.publicClient.readContract({ address, abi: TOKEN_ABI, functionName: 'DOMAIN_SEPARATOR' });
  // Same name and version as USDC, another verifyingContract: another domain.
  t.not(await separatorAt(copy.address), await separatorAt(usdc.address));
  t.is(
    await a.publicClient.readContract({ address: copy.address, abi: TOKEN_ABI, functionName: 'minter' }),
    minter.address,
  );
  await copy.mint(holder.address, 42n);
  t.is(await copy.balanceOf(holder.address), 42n);
  t.is(await usdc.balanceOf(holder.address), 0n);
});

// ---------------------------------------------------------------------------------------------------------------
// transferWithAuthorization

test('transferWithAuthorization by a third account moves the balance, logs AuthorizationUsed and cannot be replayed', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 5_000_000n);
  const auth = authorization(payer.address, payee.address, 1_250_000n);
  const signature = await signTransfer(payer.privateKey, usdc, auth);

  const receipt = await submitTransfer(a, submitter, usdc, auth, signature);
  t.is(receipt.status, 'success');
  t.is(receipt.from.toLowerCase(), submitter.address.toLowerCase());
  t.is(await usdc.balanceOf(payer.address), 3_750_000n);
  t.is(await usdc.balanceOf(payee.address), 1_250_000n);
  t.true(await usdc.authorizationState(payer.address, auth.nonce));
  const events = authorizationEvents(receipt.logs, usdc);
  const used = events.find((e) => e.eventName === 'AuthorizationUsed');
  t.deepEqual(used?.args, { authorizer: payer.address, nonce: auth.nonce });
  const transfer = events.find((e) => e.eventName === 'Transfer');
  t.deepEqual(transfer?.args, { from: payer.address, to: payee.address, value: 1_250_000n });

  // The same authorization again, through either overload.
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, signature),
    'FiatTokenV2: authorization is used or canceled',
  );
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, signature, 'bytes'),
    'FiatTokenV2: authorization is used or canceled',
  );
  t.is(await usdc.balanceOf(payee.address), 1_250_000n);
});

test('transferWithAuthorization with a bytes signature (FiatTokenV2_2 overload) settles too', async (t) => {
  const { eurc } = chain();
  const { a, payer, payee, submitter } = await parties(eurc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n);
  const receipt = await submitTransfer(
    a,
    submitter,
    eurc,
    auth,
    await signTransfer(payer.privateKey, eurc, auth),
    'bytes',
  );
  t.is(receipt.status, 'success');
  t.is(await eurc.balanceOf(payer.address), 0n);
  t.is(await eurc.balanceOf(payee.address), 1_000n);
});

test('an authorization signed for the EURC domain is refused by USDC', async (t) => {
  const { usdc, eurc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n);
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, await signTransfer(payer.privateKey, eurc, auth)),
    'FiatTokenV2: invalid signature',
  );
});

test('an expired authorization reverts once the chain clock passes validBefore', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n, { validBefore: (await chainTime(a)) + 60n });
  const signature = await signTransfer(payer.privateKey, usdc, auth);
  // Valid now (a dry run succeeds) ...
  await t.notThrowsAsync(
    a.publicClient.simulateContract({
      account: submitter.address,
      address: usdc.address,
      abi: TOKEN_ABI,
      functionName: 'transferWithAuthorization',
      args: [...authArgs(auth), signature],
    }),
  );
  // ... and not after the clock moves past validBefore (the other tests' windows are far wider than this step).
  await increaseTime(a, 120);
  await reverts(t, submitTransfer(a, submitter, usdc, auth, signature), 'FiatTokenV2: authorization is expired');
  t.false(await usdc.authorizationState(payer.address, auth.nonce));
  t.is(await usdc.balanceOf(payer.address), 1_000n);
});

test('an authorization not yet valid reverts', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n, { validAfter: (await chainTime(a)) + 3600n });
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, await signTransfer(payer.privateKey, usdc, auth)),
    'FiatTokenV2: authorization is not yet valid',
  );
});

test('a signature by someone other than from reverts "invalid signature"', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n);
  const signature = await signTransfer(submitter.privateKey, usdc, auth);
  await reverts(t, submitTransfer(a, submitter, usdc, auth, signature), 'FiatTokenV2: invalid signature');
  // A valid signature over other terms (value changed after signing) is someone else's too.
  const honest = await signTransfer(payer.privateKey, usdc, auth);
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, { ...auth, value: 999n }, honest),
    'FiatTokenV2: invalid signature',
  );
  t.is(await usdc.balanceOf(payer.address), 1_000n);
});

test('malformed signatures revert with ECRecover messages, as in FiatTokenV2_2', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n);
  const signature = await signTransfer(payer.privateKey, usdc, auth);
  const [v, r, s] = vrs(signature);
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  // The same signature with s in the upper half (the malleable twin): refused.
  const highS = concat([r, numberToHex(n - BigInt(s), { size: 32 }), toHex(v === 27 ? 28 : 27, { size: 1 })]);
  await reverts(t, submitTransfer(a, submitter, usdc, auth, highS, 'bytes'), "ECRecover: invalid signature 's' value");
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, concat([r, s, toHex(v - 27, { size: 1 })]), 'bytes'),
    "ECRecover: invalid signature 'v' value",
  );
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, concat([r, s]), 'bytes'),
    'ECRecover: invalid signature length',
  );
  // The well-formed one still works afterwards: nothing was consumed.
  t.is((await submitTransfer(a, submitter, usdc, auth, signature)).status, 'success');
});

test('more than the balance reverts and leaves the nonce unused', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_001n);
  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, await signTransfer(payer.privateKey, usdc, auth)),
    'ERC20: transfer amount exceeds balance',
  );
  t.false(await usdc.authorizationState(payer.address, auth.nonce));
});

// ---------------------------------------------------------------------------------------------------------------
// receiveWithAuthorization and cancelAuthorization

test('receiveWithAuthorization: refused from anyone but the payee, accepted from the payee', async (t) => {
  const { usdc } = chain();
  const { a, payer, submitter } = await parties(usdc, 2_000n);
  const payee = await freshAccount(a);
  const auth = authorization(payer.address, payee.address, 1_500n);
  const signature = await signReceive(payer.privateKey, usdc, auth);
  const call = (from: DevAccount) =>
    a.wallet(from.privateKey).writeContract({
      address: usdc.address,
      abi: TOKEN_ABI,
      functionName: 'receiveWithAuthorization',
      args: [...authArgs(auth), ...vrs(signature)],
    });
  await reverts(t, call(submitter), 'FiatTokenV2: caller must be the payee');
  // A TransferWithAuthorization signature is not a ReceiveWithAuthorization one (different typehash).
  await reverts(
    t,
    a.wallet(payee.privateKey).writeContract({
      address: usdc.address,
      abi: TOKEN_ABI,
      functionName: 'receiveWithAuthorization',
      args: [...authArgs(auth), await signTransfer(payer.privateKey, usdc, auth)],
    }),
    'FiatTokenV2: invalid signature',
  );

  const receipt = await a.publicClient.waitForTransactionReceipt({ hash: await call(payee) });
  t.is(receipt.status, 'success');
  t.is(await usdc.balanceOf(payee.address), 1_500n);
  t.is(await usdc.balanceOf(payer.address), 500n);
  const used = authorizationEvents(receipt.logs, usdc).find((e) => e.eventName === 'AuthorizationUsed');
  t.deepEqual(used?.args, { authorizer: payer.address, nonce: auth.nonce });
});

test('cancelAuthorization makes a later transfer with that nonce revert', async (t) => {
  const { usdc } = chain();
  const { a, payer, payee, submitter } = await parties(usdc, 1_000n);
  const auth = authorization(payer.address, payee.address, 1_000n);
  const transferSig = await signTransfer(payer.privateKey, usdc, auth);
  const cancelSig = await signTypedData({
    privateKey: payer.privateKey,
    domain: authorizationDomain(usdc.eip712Token, CHAIN_ID),
    types: CANCEL_AUTHORIZATION_TYPES,
    primaryType: 'CancelAuthorization',
    message: { authorizer: payer.address, nonce: auth.nonce },
  });
  const w = a.wallet(submitter.privateKey);
  // A cancellation signed by someone else is refused.
  const forged = await signTypedData({
    privateKey: submitter.privateKey,
    domain: authorizationDomain(usdc.eip712Token, CHAIN_ID),
    types: CANCEL_AUTHORIZATION_TYPES,
    primaryType: 'CancelAuthorization',
    message: { authorizer: payer.address, nonce: auth.nonce },
  });
  await reverts(
    t,
    w.writeContract({
      address: usdc.address,
      abi: TOKEN_ABI,
      functionName: 'cancelAuthorization',
      args: [payer.address, auth.nonce, forged],
    }),
    'FiatTokenV2: invalid signature',
  );

  const receipt = await w.waitForTransactionReceipt({
    hash: await w.writeContract({
      address: usdc.address,
      abi: TOKEN_ABI,
      functionName: 'cancelAuthorization',
      args: [payer.address, auth.nonce, ...vrs(cancelSig)],
    }),
  });
  t.is(receipt.status, 'success');
  const canceled = authorizationEvents(receipt.logs, usdc).find((e) => e.eventName === 'AuthorizationCanceled');
  t.deepEqual(canceled?.args, { authorizer: payer.address, nonce: auth.nonce });
  t.true(await usdc.authorizationState(payer.address, auth.nonce));

  await reverts(
    t,
    submitTransfer(a, submitter, usdc, auth, transferSig),
    'FiatTokenV2: authorization is used or canceled',
  );
  await reverts(
    t,
    w.writeContract({
      address: usdc.address,
      abi: TOKEN_ABI,
      functionName: 'cancelAuthorization',
      args: [payer.address, auth.nonce, cancelSig],
    }),
    'FiatTokenV2: authorization is used or canceled',
  );
  t.is(await usdc.balanceOf(payer.address), 1_000n);
});

// ---------------------------------------------------------------------------------------------------------------
// The official x402 facilitator

test('@x402/evm ExactEvmScheme verifies and settles on anvil a payment signed by our own x402 v2 signer', async (t) => {
  const { anvil: a, usdc } = chain();
  const [payer, payee, operator] = await Promise.all([freshAccount(a, 0n), freshAccount(a, 0n), freshAccount(a)]);
  await usdc.mint(payer.address, 5_000_000n);

  // Every JSON-RPC call the facilitator makes, and which token function (and overload) each call or transaction runs.
  const calls: string[] = [];
  const describe = (to: string | null | undefined, data: Hex | undefined): string => {
    if (data === undefined) return '';
    const target = to?.toLowerCase() === usdc.address.toLowerCase() ? 'token' : to;
    try {
      const { functionName, args } = decodeFunctionData({ abi: TOKEN_ABI, data });
      const overload = functionName === 'transferWithAuthorization' ? (args.length === 9 ? '(v,r,s)' : '(bytes)') : '';
      return ` ${target}.${functionName}${overload}`;
    } catch {
      return ` ${target}.${data.slice(0, 10)}`;
    }
  };
  const transport = http(a.url, {
    onFetchRequest: async (request) => {
      const body = (await request.clone().json()) as { method: string; params?: readonly unknown[] };
      const param = body.params?.[0];
      if (body.method === 'eth_call' || body.method === 'eth_estimateGas') {
        const tx = param as { to?: string; data?: Hex; input?: Hex };
        calls.push(`${body.method}${describe(tx.to, tx.data ?? tx.input)}`);
      } else if (body.method === 'eth_sendRawTransaction') {
        const tx = parseTransaction(param as Hex);
        calls.push(`${body.method}${describe(tx.to, tx.data)}`);
      } else calls.push(body.method);
    },
  });
  const wallet = createWalletClient({
    account: privateKeyToAccount(operator.privateKey),
    chain: a.chain,
    transport,
    pollingInterval: 50,
  }).extend(publicActions);
  const facilitator = new x402Facilitator().register(
    SANDBOX.caip2,
    new ExactEvmScheme(
      toFacilitatorEvmSigner({
        ...wallet,
        address: wallet.account.address,
        // Only for the types (viem's parameter type is a union x402's signature type does not name): the exact
        // scheme recovers EOA signatures itself and never calls it.
        verifyTypedData: (args) => wallet.verifyTypedData(args as VerifyTypedDataParameters),
      }),
    ),
  );

  // The merchant's offer, chosen and signed by the router's own code (choosePayment + signPayment).
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: SANDBOX.caip2,
    asset: usdc.address,
    amount: '1250000',
    payTo: payee.address,
    maxTimeoutSeconds: 600,
    extra: { name: 'USDC', version: '2' },
  };
  const choice = choosePayment(
    {
      header: () => undefined,
      paymentRequired: { x402Version: 2, resource: { url: 'https://merchant.test/paid' }, accepts: [requirements] },
    },
    { environment: 'sandbox' },
  );
  if (choice.type !== 'x402') throw new Error(`not an x402 choice: ${JSON.stringify(choice)}`);
  const signed = signPayment(choice, payer);
  t.is(signed.header.name, 'PAYMENT-SIGNATURE');
  const payload = JSON.parse(Buffer.from(signed.header.value, 'base64').toString('utf8')) as PaymentPayload;
  t.deepEqual(payload.accepted, requirements);

  const verified = await facilitator.verify(payload, requirements);
  t.deepEqual(verified, { isValid: true, invalidReason: undefined, payer: payer.address });
  const verifyCalls = calls.splice(0);

  const settled = await facilitator.settle(payload, requirements);
  t.true(settled.success, JSON.stringify(settled));
  t.regex(settled.transaction, /^0x[0-9a-f]{64}$/);
  const settleCalls = calls.splice(0);
  t.log(`facilitator verify RPC: ${verifyCalls.join(', ')}`);
  t.log(`facilitator settle RPC: ${settleCalls.join(', ')}`);
  // The token functions it calls: the transfer itself only (simulated in verify, sent in settle).
  t.true(verifyCalls.includes('eth_call token.transferWithAuthorization(v,r,s)'));
  t.true(settleCalls.includes('eth_sendRawTransaction token.transferWithAuthorization(v,r,s)'));
  t.deepEqual(
    [...new Set([...verifyCalls, ...settleCalls].flatMap((c) => (c.includes(' token.') ? [c.split('.')[1]] : [])))],
    ['transferWithAuthorization(v,r,s)'],
  );

  const receipt = await a.publicClient.getTransactionReceipt({ hash: settled.transaction as Hex });
  t.is(receipt.status, 'success');
  t.is(receipt.from.toLowerCase(), operator.address.toLowerCase());
  const used = authorizationEvents(receipt.logs, usdc).find((e) => e.eventName === 'AuthorizationUsed');
  t.deepEqual(used?.args, { authorizer: payer.address, nonce: signed.authorization.nonce });
  t.is(await usdc.balanceOf(payee.address), 1_250_000n);
  t.is(await usdc.balanceOf(payer.address), 3_750_000n);

  // Settled once: the same payload again is refused by the facilitator's own simulation, with the token's reason.
  // (Its follow-up diagnosis reads name/version/balanceOf/authorizationState through Multicall3 at 0xcA11...CA11,
  // which a bare anvil lacks: hence the generic reason rather than invalid_exact_evm_nonce_already_used.)
  const again = await facilitator.verify(payload, requirements);
  t.false(again.isValid);
  t.is(again.invalidReason, 'invalid_exact_evm_transaction_simulation_failed');
  t.regex(again.invalidMessage ?? '', /FiatTokenV2: authorization is used or canceled/);
});
