// A real local EVM for tests: anvil (foundry, from the @foundry-rs/anvil-linux-amd64 npm package) with the
// EIP-3009 test token (contracts/EIP3009Token.sol, artifact contracts/EIP3009Token.json) placed at the token
// addresses the service signs for (shared/assets.ts), so a signature the service makes is checked and settled by
// contract code instead of a stub.
//
// One anvil per test file: `startAnvil()` in test.before, `stop()` in test.after.always. Tests in a file run
// concurrently, so each should pay from its own account (`freshAccount`): the helpers below serialize their own
// transactions per sender, and nothing else shares a sender.
import { type ChildProcess, spawn } from 'node:child_process';
import { type FacilitatorEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  type VerifyTypedDataParameters,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type HttpTransport,
  type PrivateKeyAccount,
  type PublicActions,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  type WalletClient,
  bytesToHex,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
  parseEther,
  publicActions,
} from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { ARTIFACT_PATH, MULTICALL_ARTIFACT_PATH, type TokenArtifact } from '../../contracts/build.js';
import { MULTICALL3 } from '../../shared/settlement/chain/client.js';
import { type Asset, NETWORKS } from '../../shared/assets.js';
import { keyedSerializer } from '../../shared/serial.js';

/** Anvil's default mnemonic: its ten prefunded dev accounts (10,000 ETH each) derive from it. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
const DEV_ACCOUNTS = 10;
const READY_TIMEOUT_MS = 60_000;
/** Polling for receipts and readiness: anvil mines each transaction as it arrives (automine). */
const POLL_MS = 50;

/** The token's functions and events the tests use, typed for viem (test/settlement/chain-token.test.ts checks them against the artifact). */
export const TOKEN_ABI = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function version() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function minter() view returns (address)',
  'function mint(address to, uint256 amount) returns (bool)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
]);

export interface DevAccount {
  readonly address: Address;
  readonly privateKey: Hex;
}

export type AnvilWallet = WalletClient<HttpTransport, Chain, PrivateKeyAccount> &
  PublicActions<HttpTransport, Chain, PrivateKeyAccount>;

export interface Anvil {
  readonly url: string;
  readonly chainId: number;
  readonly chain: Chain;
  /** Anvil's prefunded dev accounts; [0] deploys and mints for the helpers below. */
  readonly accounts: readonly DevAccount[];
  readonly publicClient: PublicClient<HttpTransport, Chain>;
  /** anvil_* / evm_* methods (setBalance, setCode, increaseTime, mine, ...). */
  readonly testClient: TestClient<'anvil', HttpTransport, Chain>;
  /** A wallet (with the public actions) sending from `privateKey`. */
  wallet(privateKey: Hex): AnvilWallet;
  /** Kills anvil and waits for it to exit. Idempotent. */
  stop(): Promise<void>;
}

let devAccounts: readonly DevAccount[] | undefined;

/** Anvil's dev accounts, derived from its mnemonic as anvil derives them (m/44'/60'/0'/0/i). */
export function anvilDevAccounts(): readonly DevAccount[] {
  devAccounts ??= Array.from({ length: DEV_ACCOUNTS }, (_, addressIndex) => {
    const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex });
    const key = account.getHdKey().privateKey;
    if (key === null) throw new Error('HD key without a private key');
    return { address: account.address, privateKey: bytesToHex(key) };
  });
  return devAccounts;
}

/** The anvil binary: ANVIL_BIN if set, else the one the npm package ships. */
function anvilBinary(): string {
  const fromEnv = process.env.ANVIL_BIN;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const pkg = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json');
  return join(dirname(pkg), 'bin', 'anvil');
}

// Anvils still running when the test process exits are killed with it (an 'exit' handler must be synchronous).
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function killOnExit(child: ChildProcess): void {
  running.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of running) c.kill('SIGKILL');
  });
}

/** The last `max` characters of a stream's output, for error messages. */
function tail(max: number): { push(chunk: string): void; text(): string } {
  let buf = '';
  return {
    push(chunk) {
      buf = (buf + chunk).slice(-max);
    },
    text: () => buf,
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts anvil on 127.0.0.1 on a port the kernel picks (`--port 0`: anvil prints the bound address, so there is
 * no window in which another process could take a port chosen beforehand) and waits until `eth_chainId` answers.
 */
export async function startAnvil({ chainId = 84532 }: { chainId?: number } = {}): Promise<Anvil> {
  const bin = anvilBinary();
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--chain-id',
    String(chainId),
    '--accounts',
    String(DEV_ACCOUNTS),
    '--mnemonic',
    ANVIL_MNEMONIC,
    // No --quiet: it would also hide the "Listening on" line the port is read from. The rest of stdout (a banner,
    // then one line per RPC call) is drained and only its end kept for error messages.
    '--color',
    'never',
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  killOnExit(child);
  const stdout = tail(4096);
  const stderr = tail(8192);
  child.stderr?.setEncoding('utf8').on('data', (c: string) => stderr.push(c));
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => resolve(`could not start ${bin}: ${err.message}`));
    child.once('exit', (code, signal) => resolve(`anvil exited (code ${code}, signal ${signal})`));
  });
  const listening = new Promise<number>((resolve) => {
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      stdout.push(c);
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(stdout.text());
      if (m?.[1] !== undefined) resolve(Number(m[1]));
    });
  });

  const fail = async (why: string): Promise<never> => {
    running.delete(child);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    throw new Error(`${why}\nanvil stderr:\n${stderr.text() || '(empty)'}\nanvil stdout (end):\n${stdout.text()}`);
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), READY_TIMEOUT_MS);
  });
  const port = await Promise.race([listening, exited, timeout]);
  if (typeof port !== 'number') {
    clearTimeout(timer);
    return fail(port === 'timeout' ? `anvil did not listen within ${READY_TIMEOUT_MS / 1000} s` : port);
  }
  const url = `http://127.0.0.1:${port}`;

  // Ready once eth_chainId answers with our chain id.
  let lastError = 'no answer yet';
  let ready = false;
  while (!ready && Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(2000),
      });
      const body = (await res.json()) as { result?: unknown };
      if (body.result === `0x${chainId.toString(16)}`) ready = true;
      else lastError = `eth_chainId answered ${JSON.stringify(body)}`;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (!ready) await sleep(POLL_MS);
  }
  clearTimeout(timer);
  if (!ready) {
    const why =
      child.exitCode !== null || child.signalCode !== null
        ? await exited
        : `not ready within ${READY_TIMEOUT_MS / 1000} s`;
    return fail(`anvil at ${url}: ${why} (last eth_chainId: ${lastError})`);
  }

  const chain = defineChain({
    id: chainId,
    name: `anvil-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  const transport = http(url);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: POLL_MS });
  const testClient = createTestClient({ mode: 'anvil', chain, transport, pollingInterval: POLL_MS });
  let stopping: Promise<void> | undefined;
  return {
    url,
    chainId,
    chain,
    accounts: anvilDevAccounts(),
    publicClient,
    testClient,
    wallet: (privateKey) =>
      createWalletClient({
        account: privateKeyToAccount(privateKey),
        chain,
        transport,
        pollingInterval: POLL_MS,
      }).extend(publicActions),
    stop() {
      stopping ??= (async () => {
        running.delete(child);
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = once(child, 'exit');
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(force);
      })();
      return stopping;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Accounts, gas and the chain clock

/** Sets `address`'s ETH balance (anvil_setBalance). */
export async function fundGas(anvil: Anvil, address: Address, wei: bigint = parseEther('10')): Promise<void> {
  await anvil.testClient.setBalance({ address, value: wei });
}

/** A new random account, given `gas` wei of ETH (0: none, e.g. for a payer that only signs). */
export async function freshAccount(anvil: Anvil, gas: bigint = parseEther('10')): Promise<DevAccount> {
  const privateKey = generatePrivateKey();
  const { address } = privateKeyToAccount(privateKey);
  if (gas > 0n) await fundGas(anvil, address, gas);
  return { address, privateKey };
}

/** Mines `blocks` empty blocks. */
export async function mine(anvil: Anvil, blocks = 1): Promise<void> {
  await anvil.testClient.mine({ blocks });
}

/** Moves the chain clock `seconds` ahead and mines a block at the new time (evm_increaseTime + evm_mine). */
export async function increaseTime(anvil: Anvil, seconds: number): Promise<void> {
  await anvil.testClient.increaseTime({ seconds });
  await mine(anvil);
}

/** The latest block's timestamp: the chain's clock, which increaseTime moves away from the wall clock. */
export async function chainTime(anvil: Anvil): Promise<bigint> {
  return (await anvil.publicClient.getBlock({ blockTag: 'latest' })).timestamp;
}

// ---------------------------------------------------------------------------------------------------------------
// The token

const serialize = keyedSerializer();

/** Sends from a dev account one transaction at a time (viem reads the nonce per send) and waits for success. */
function sendFrom(anvil: Anvil, from: DevAccount, send: (w: AnvilWallet) => Promise<Hex>): Promise<TransactionReceipt> {
  return serialize(`${anvil.url}|${from.address.toLowerCase()}`, async () => {
    const w = anvil.wallet(from.privateKey);
    const receipt = await w.waitForTransactionReceipt({ hash: await send(w) });
    if (receipt.status !== 'success') throw new Error(`transaction ${receipt.transactionHash} reverted`);
    return receipt;
  });
}

let artifact: TokenArtifact | undefined;
/** contracts/EIP3009Token.json (rebuild with `npm run contracts:build`). */
export function tokenArtifact(): TokenArtifact {
  artifact ??= JSON.parse(readFileSync(ARTIFACT_PATH, 'utf8')) as TokenArtifact;
  return artifact;
}

export interface DeployTokenOptions {
  /** Where the token's code ends up: the service's token address. */
  readonly at: Address;
  readonly name: string;
  readonly symbol: string;
  /** The EIP-712 domain version. */
  readonly version: string;
  /** The account allowed to mint; default anvil's first dev account. */
  readonly minter?: Address;
}

export interface TokenHandle {
  readonly address: Address;
  /** The token as shared/protocols/eip3009.ts takes it (address and EIP-712 name/version). */
  readonly eip712Token: {
    readonly address: Address;
    readonly eip712: { readonly name: string; readonly version: string };
  };
  /** Mints from the minter (a dev account: signed locally; any other address: impersonated). */
  mint(to: Address, amount: bigint): Promise<TransactionReceipt>;
  balanceOf(address: Address): Promise<bigint>;
  authorizationState(authorizer: Address, nonce: Hex): Promise<boolean>;
}

/**
 * Deploys the token from anvil's first dev account and copies its runtime code to `at` (anvil_setCode). The copy
 * works because the token keeps everything its constructor sets in immutables, which are part of the runtime
 * code, and computes its EIP-712 domain from address(this) per call. Storage at `at` is kept: deploying twice at
 * one address keeps the balances and used nonces of the first.
 */
export async function deployToken(anvil: Anvil, o: DeployTokenOptions): Promise<TokenHandle> {
  const { abi, bytecode } = tokenArtifact();
  const deployer = anvil.accounts[0];
  if (deployer === undefined) throw new Error('anvil has no dev accounts');
  const minter = getAddress(o.minter ?? deployer.address);
  const receipt = await sendFrom(anvil, deployer, (w) =>
    w.deployContract({ abi, bytecode, args: [o.name, o.symbol, o.version, minter] }),
  );
  if (receipt.contractAddress == null) throw new Error('deployment receipt without a contract address');
  const code = await anvil.publicClient.getCode({ address: receipt.contractAddress });
  if (code === undefined || code === '0x') throw new Error(`no code at ${receipt.contractAddress} after deploying`);
  const address = getAddress(o.at);
  await anvil.testClient.setCode({ address, bytecode: code });
  if ((await anvil.publicClient.getCode({ address })) !== code) throw new Error(`anvil_setCode at ${address} failed`);

  const read = anvil.publicClient;
  const devMinter = anvil.accounts.find((a) => a.address === minter);
  return {
    address,
    eip712Token: { address, eip712: { name: o.name, version: o.version } },
    mint: (to, amount) => {
      if (devMinter !== undefined) {
        return sendFrom(anvil, devMinter, (w) =>
          w.writeContract({ address, abi: TOKEN_ABI, functionName: 'mint', args: [to, amount] }),
        );
      }
      return serialize(`${anvil.url}|${minter.toLowerCase()}`, async () => {
        await anvil.testClient.impersonateAccount({ address: minter });
        await fundGas(anvil, minter);
        const w = createWalletClient({ chain: anvil.chain, transport: http(anvil.url), pollingInterval: POLL_MS });
        const account: Account = { address: minter, type: 'json-rpc' };
        const hash = await w.writeContract({
          account,
          address,
          abi: TOKEN_ABI,
          functionName: 'mint',
          args: [to, amount],
        });
        const r = await read.waitForTransactionReceipt({ hash });
        if (r.status !== 'success') throw new Error(`mint ${hash} reverted`);
        return r;
      });
    },
    balanceOf: (account) => read.readContract({ address, abi: TOKEN_ABI, functionName: 'balanceOf', args: [account] }),
    authorizationState: (authorizer, nonce) =>
      read.readContract({ address, abi: TOKEN_ABI, functionName: 'authorizationState', args: [authorizer, nonce] }),
  };
}

/** Both sandbox assets of shared/assets.ts (Base Sepolia USDC and EURC) at their addresses, by symbol. */
export async function deploySandboxTokens(anvil: Anvil): Promise<Record<Asset['symbol'], TokenHandle>> {
  const tokens: Partial<Record<Asset['symbol'], TokenHandle>> = {};
  // One after the other: both deploy from the same account.
  for (const asset of NETWORKS.sandbox.assets) {
    tokens[asset.symbol] = await deployToken(anvil, {
      at: asset.address,
      name: asset.eip712.name,
      symbol: asset.symbol,
      version: asset.eip712.version,
    });
  }
  const { USDC, EURC } = tokens;
  if (USDC === undefined || EURC === undefined) throw new Error('sandbox assets lack USDC or EURC');
  return { USDC, EURC };
}

/**
 * The signer of an official x402 facilitator that settles on this anvil for real, sending from `account` (it pays
 * the gas): a viem wallet client with the public actions, as @x402/evm's `toFacilitatorEvmSigner` expects.
 */
export function facilitatorSigner(anvil: Anvil, account: DevAccount): FacilitatorEvmSigner {
  const wallet = anvil.wallet(account.privateKey);
  return toFacilitatorEvmSigner({
    ...wallet,
    address: wallet.account.address,
    // Only for the types (viem's parameter type is a union x402's signature type does not name): the exact scheme
    // recovers EOA signatures itself and never calls it.
    verifyTypedData: (args) => wallet.verifyTypedData(args as VerifyTypedDataParameters),
  });
}

/**
 * contracts/Multicall3.sol at Multicall3's address (a bare anvil has none; Base and Base Sepolia do): what a plan
 * order paying several receivers sends its transfers through.
 */
export async function deployMulticall3(anvil: Anvil): Promise<void> {
  const { abi, bytecode } = JSON.parse(readFileSync(MULTICALL_ARTIFACT_PATH, 'utf8')) as TokenArtifact;
  const deployer = anvil.accounts[0];
  if (deployer === undefined) throw new Error('anvil has no dev accounts');
  const receipt = await sendFrom(anvil, deployer, (w) => w.deployContract({ abi, bytecode }));
  if (receipt.contractAddress == null) throw new Error('deployment receipt without a contract address');
  const code = await anvil.publicClient.getCode({ address: receipt.contractAddress });
  if (code === undefined || code === '0x') throw new Error('no Multicall3 code after deploying');
  await anvil.testClient.setCode({ address: MULTICALL3, bytecode: code });
}
