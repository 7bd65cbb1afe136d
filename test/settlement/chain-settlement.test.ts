import { type Address, type Hex, getAddress, parseEther, parseGwei } from 'viem';
import { ensureOperatorWallet } from '../../shared/accounts/service-wallets.js';
import {
  ChainBalance,
  ChainOrder,
  ChainReservation,
  PlanOrder,
  RouterPayment,
} from '../../shared/db/entities/index.js';
import { randomNonce, signAuthorization } from '../../shared/protocols/eip3009.js';
import { MULTICALL3 } from '../../shared/settlement/chain/client.js';
import { custodialKeyOf } from '../../shared/custody/custodial-key.js';
import { privateKeyToAccount } from 'viem/accounts';
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import { collectFeesOnce } from '../../admin/jobs/chain-fee-collector.js';
import { chainClientOf } from '../../shared/settlement/backend.js';
import { walletBalances } from '../../shared/settlement/wallet-report.js';
import { OperatorCannotPay } from '../../shared/settlement/chain/client.js';
import { type Anvil, type TokenHandle, freshAccount, fundGas, mine } from '../support/anvil.js';
import { runCli } from '../support/cli.js';
import { CHAIN_ENV, useChainMerchant } from '../support/chain-merchant.js';
import { forEachDb } from '../support/matrix.js';
import { createPlan } from '../support/registry-builders.js';
import { delegation, paymentRequired, permission, seller } from '../support/x402.js';
import { MERCHANT_V2 } from '../support/merchants/fixtures.js';
import type { X402V2Merchant } from '../support/merchants/x402-v2.js';
import {
  EURC,
  FEE_RECIPIENT,
  USDC,
  type User,
  createDelegation,
  delegationRow,
  delegationTransactions,
} from '../support/router-fixtures.js';
import type { Stack } from '../support/stack.js';

const PRICE = 10_000n; // fee 500 (5%): 10,500 reserved per payment; cap charge 2 cents
const PER_PAYMENT = 10_500n;

let anvil: Anvil;
let usdc: TokenHandle;
let merchant: X402V2Merchant;
/** Read by forEachDb's stacks when they start (after this file's own `before`, registered first). */
const env: Record<string, string> = {
  ...CHAIN_ENV,
  CHAIN_RECONCILE_INTERVAL_MS: '200',
  // The shortest window the router allows: the expiry test waits it out on the chain's own clock.
  ROUTER_MAX_AUTH_TTL_SECS: '30',
  // An order's request waits this long for its transaction (the timeout test leaves one unmined).
  CHAIN_CONFIRM_TIMEOUT_MS: '5000',
};

useChainMerchant(PRICE, env, (c) => {
  ({ anvil, usdc, merchant } = c);
});

let n = 0;
const rid = () => `chain-${Date.now()}-${++n}`;

/** Polls `read` until `done` holds (mining a block each time, so time-based checks see the chain's clock move). */
async function until<T>(
  read: () => Promise<T>,
  done: (v: T) => boolean,
  what: string,
  limitMs = 120_000,
  mineBlocks = true,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}: ${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}`,
      );
    if (mineBlocks) await mine(anvil);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const chainTimeNow = async () => (await anvil.publicClient.getBlock({ blockTag: 'latest' })).timestamp;

async function v2Accepts(): Promise<Record<string, unknown>[]> {
  const r = await fetch(merchant.url + merchant.paidPath);
  const pr = decodePaymentRequiredV2(r.headers.get('payment-required') ?? '');
  if (pr.type !== 'decoded') throw new Error(pr.reason);
  return pr.value.accepts as Record<string, unknown>[];
}

/** Mode A: a credential for the merchant's offer, with a requestId (so its fee leg is charged at once). */
async function mintCredential(api: User['api'], delegationId: string) {
  const r = await api.post('/router/payments', {
    delegationId,
    protocol: 'x402',
    target: { accepts: await v2Accepts() },
    requestId: rid(),
  });
  if (r.status !== 200) throw new Error(`mint: ${r.status} ${r.text}`);
  return r.body as { paymentId: string; credential: { name: string; value: string } };
}

const payment = (s: Stack, id: string) => s.ctx.db.em().findOneOrFail(RouterPayment, { id });
const reservation = (s: Stack, id: string) => s.ctx.db.em().findOne(ChainReservation, { id });
const chainBalance = (s: Stack, address: string) =>
  s.ctx.db.em().findOne(ChainBalance, { address: getAddress(address), asset: USDC.address });

forEachDb(
  ({ stack, test }) => {
    let operatorFunded = false;
    async function paidUser(onChain: bigint, capCents = 1000) {
      if (!operatorFunded) {
        // The operator pays the gas of the fee legs it collects.
        await fundGas(anvil, getAddress(await ensureOperatorWallet(stack().ctx)), parseEther('10'));
        operatorFunded = true;
      }
      const u = await stack().user();
      if (onChain > 0n) await usdc.mint(u.walletAddress as Address, onChain);
      return { u, delegationId: await createDelegation(u, capCents) };
    }

    test('mode B: the official merchant settles on anvil; the reconciler agrees; the operator collects the fee on chain', async (t) => {
      const { u, delegationId } = await paidUser(1_000_000n);
      const feeBefore = await usdc.balanceOf(FEE_RECIPIENT);
      const r = await u.api.post('/router/route', {
        requestId: rid(),
        delegationId,
        url: merchant.url + merchant.paidPath,
      });
      t.is(r.status, 200, r.text);
      t.true(r.body.paid);
      t.is(r.body.payment.status, 'Settled');
      const txHash = r.body.payment.txHash as Hex;
      // The merchant's PAYMENT-RESPONSE names a transaction that exists on anvil and used our authorization.
      const receipt = await anvil.publicClient.getTransactionReceipt({ hash: txHash });
      t.is(receipt.status, 'success');
      const id = r.body.payment.paymentId as string;
      const row = await payment(stack(), id);
      t.is(row.authNonce?.toLowerCase(), (await reservation(stack(), id))?.authNonce ?? undefined);
      t.true(await usdc.authorizationState(u.walletAddress as Address, row.authNonce as Hex));
      t.is((await usdc.balanceOf(getAddress(MERCHANT_V2))) >= PRICE, true);

      // The reconciler finds the AuthorizationUsed event: the merchant leg is spent in that transaction's block.
      const spent = await until(
        () => reservation(stack(), id),
        (x) => x?.status === 'spent' || x?.status === 'reflected',
        'the merchant leg spent',
      );
      t.is(spent?.txHash?.toLowerCase(), txHash.toLowerCase());
      t.is(spent?.spentBlock, receipt.blockNumber);
      // Then the fee collector: an EIP-3009 transfer from the buyer to the fee recipient, sent by the operator.
      const collected = await until(
        () => payment(stack(), id),
        (p) => p.feeTxHash != null,
        'the fee collected',
      );
      t.is(collected.feeStatus, 'settled');
      const feeReceipt = await anvil.publicClient.getTransactionReceipt({ hash: collected.feeTxHash as Hex });
      t.is(feeReceipt.status, 'success');
      t.is(getAddress(feeReceipt.from), getAddress(await ensureOperatorWallet(stack().ctx)));
      t.is((await usdc.balanceOf(FEE_RECIPIENT)) - feeBefore, 500n);
      t.is(await usdc.balanceOf(u.walletAddress as Address), 1_000_000n - PER_PAYMENT);
      // A balance read after both transfers (the CLI's `wallets balance`) reflects them: nothing stays reserved.
      const report = await walletBalances(stack().ctx, u.walletAddress);
      const usdcLine = report.balances.find((b) => b.symbol === 'USDC');
      t.deepEqual(usdcLine, {
        symbol: 'USDC',
        asset: USDC.address,
        balance: String(1_000_000n - PER_PAYMENT),
        reserved: '0',
        available: String(1_000_000n - PER_PAYMENT),
      });
      t.is((await reservation(stack(), id))?.status, 'reflected');
      t.is((await reservation(stack(), `${id}:fee`))?.status, 'reflected');
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
    });

    test('a short on-chain balance is 402 BCK.ROUTER.0009 and reserves nothing; the merchant is not paid', async (t) => {
      const { u, delegationId } = await paidUser(PER_PAYMENT - 1n);
      const r = await u.api.post('/router/route', {
        requestId: rid(),
        delegationId,
        url: merchant.url + merchant.paidPath,
      });
      t.is(r.status, 402, r.text);
      t.is(r.body.code, 'BCK.ROUTER.0009');
      const b = await chainBalance(stack(), u.walletAddress);
      t.is(b?.balance, PER_PAYMENT - 1n);
      t.is(b?.reserved, 0n);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
      // The fee leg is reserved with the merchant leg: exactly PER_PAYMENT is needed.
      await usdc.mint(u.walletAddress as Address, 1n);
      const ok = await u.api.post('/router/route', {
        requestId: rid(),
        delegationId,
        url: merchant.url + merchant.paidPath,
      });
      t.is(ok.status, 200, ok.text);
    });

    test('two proxy processes racing 40 mode A mints on one on-chain balance authorize no more than it holds', async (t) => {
      const fits = 7n;
      const { u, delegationId } = await paidUser(fits * PER_PAYMENT + PER_PAYMENT - 1n);
      const second = await stack().spawn('proxy');
      try {
        const accepts = await v2Accepts();
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) => {
            const body = { delegationId, protocol: 'x402', target: { accepts }, requestId: rid() };
            return i % 2 === 0
              ? u.api.post('/router/payments', body)
              : fetch(`${second.url}/api/v1/router/payments`, {
                  method: 'POST',
                  headers: { authorization: `Bearer ${u.apiKey}`, 'content-type': 'application/json' },
                  body: JSON.stringify(body),
                }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
          }),
        );
        const paid = results.filter((r) => r.status === 200);
        t.is(paid.length, Number(fits));
        t.true(results.every((r) => r.status === 200 || (r.status === 402 && r.body.code === 'BCK.ROUTER.0009')));
        const b = await chainBalance(stack(), u.walletAddress);
        t.is(b?.reserved, fits * PER_PAYMENT);
        const open = await stack()
          .ctx.db.em()
          .find(ChainReservation, { address: getAddress(u.walletAddress) });
        t.is(
          open.reduce((s, r) => s + r.amount, 0n),
          fits * PER_PAYMENT,
        );
        t.is((await delegationRow(stack(), delegationId)).amountSpentCents, fits * 2n);
      } finally {
        await second.stop();
      }
    });

    test('a credential never used expires after validBefore: cap, fee leg and reservation released once', async (t) => {
      const { u, delegationId } = await paidUser(1_000_000n);
      const minted = await mintCredential(u.api, delegationId);
      const id = minted.paymentId;
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
      t.is((await chainBalance(stack(), u.walletAddress))?.reserved, PER_PAYMENT);
      // A second admin process: two reconcilers race for the expiry, and it must be given back once.
      const secondAdmin = await stack().spawn('admin');
      // ROUTER_MAX_AUTH_TTL_SECS=30: the chain's clock passes validBefore (blocks are mined while waiting).
      const expired = await until(
        () => payment(stack(), id),
        (p) => p.status === 'Expired',
        'the payment expired',
      );
      // Both reconcilers run again after it expired (every 200 ms); neither gives anything back twice.
      await new Promise((r) => setTimeout(r, 1000));
      await secondAdmin.stop();
      const journal = await delegationTransactions(stack(), delegationId);
      t.deepEqual(
        journal.map((j) => [j.kind, j.amountCents, j.reference]),
        [
          ['reserve', 2n, id],
          ['release', -2n, id],
        ],
      );
      t.is(expired.feeStatus, 'released');
      t.is(expired.feeTxHash, null);
      t.is((await reservation(stack(), id))?.status, 'released');
      t.is((await reservation(stack(), `${id}:fee`))?.status, 'released');
      t.is((await chainBalance(stack(), u.walletAddress))?.reserved, 0n);
      const d = await delegationRow(stack(), delegationId);
      t.is(d.amountSpentCents, 0n);
      // The authorization can no longer be used: the merchant's facilitator refuses it, nothing moves.
      const late = await fetch(merchant.url + merchant.paidPath, {
        headers: { [minted.credential.name]: minted.credential.value },
      });
      t.is(late.status, 402);
      t.is(await usdc.balanceOf(u.walletAddress as Address), 1_000_000n);
      t.is((await payment(stack(), id)).status, 'Expired');
    });

    test('/settled checks the transaction on chain: its own hash settles; another payment, a reverted or unknown one is 409', async (t) => {
      const { u, delegationId } = await paidUser(1_000_000n);
      const a = await mintCredential(u.api, delegationId);
      const b = await mintCredential(u.api, delegationId);
      // The test attaches credential A itself: the merchant's facilitator settles it on anvil.
      const paid = await fetch(merchant.url + merchant.paidPath, {
        headers: { [a.credential.name]: a.credential.value },
      });
      t.is(paid.status, 200);
      const settledTx = JSON.parse(Buffer.from(paid.headers.get('payment-response') ?? '', 'base64').toString('utf8'))
        .transaction as Hex;
      t.regex(settledTx, /^0x[0-9a-f]{64}$/);

      const other = await u.api.post(`/router/payments/${b.paymentId}/settled`, { txHash: settledTx });
      t.is(other.status, 409, other.text);
      t.is(other.body.code, 'BCK.ROUTER.0016');
      const unknown = await u.api.post(`/router/payments/${b.paymentId}/settled`, { txHash: `0x${'ab'.repeat(32)}` });
      t.is(unknown.status, 409);
      t.is(unknown.body.code, 'BCK.ROUTER.0014');
      // A reverted transaction: a transfer the token refuses (the sender holds nothing), mined with a fixed gas limit.
      const sender = await freshAccount(anvil);
      const w = anvil.wallet(sender.privateKey);
      const reverted = await w.writeContract({
        address: usdc.address,
        abi: [
          {
            type: 'function',
            name: 'transfer',
            stateMutability: 'nonpayable',
            inputs: [
              { name: 'to', type: 'address' },
              { name: 'value', type: 'uint256' },
            ],
            outputs: [{ type: 'bool' }],
          },
        ],
        functionName: 'transfer',
        args: [sender.address, 1n],
        gas: 100_000n,
      });
      t.is((await anvil.publicClient.waitForTransactionReceipt({ hash: reverted })).status, 'reverted');
      const rev = await u.api.post(`/router/payments/${b.paymentId}/settled`, { txHash: reverted });
      t.is(rev.status, 409);
      t.is(rev.body.code, 'BCK.ROUTER.0015');
      t.is((await payment(stack(), b.paymentId)).status, 'Issued');

      const own = await u.api.post(`/router/payments/${a.paymentId}/settled`, {
        txHash: settledTx.toUpperCase().replace('0X', '0x'),
      });
      t.is(own.status, 200, own.text);
      t.is(own.body.status, 'Settled');
      t.is(own.body.txHash, settledTx.toLowerCase());
      const res = await reservation(stack(), a.paymentId);
      t.true(res?.status === 'spent' || res?.status === 'reflected');
    });

    test('the operator without gas: the fee collector refuses clearly and collects nothing; with gas it collects', async (t) => {
      const operator = getAddress(await ensureOperatorWallet(stack().ctx));
      const { u, delegationId } = await paidUser(1_000_000n); // before: its first call funds the operator
      await fundGas(anvil, operator, 0n);
      // Gas must cost something: the empty blocks the other tests mined lowered the base fee (EIP-1559) towards
      // zero, where a wallet without coin could still send. No block is mined by this test until the refusal is seen.
      await anvil.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei('1') });
      await mine(anvil);
      try {
        const r = await u.api.post('/router/route', {
          requestId: rid(),
          delegationId,
          url: merchant.url + merchant.paidPath,
        });
        t.is(r.status, 200, r.text);
        const id = r.body.payment.paymentId as string;
        await until(
          () => reservation(stack(), id),
          (x) => x?.status === 'spent' || x?.status === 'reflected',
          'the merchant leg spent',
          120_000,
          false,
        );
        const s = stack().ctx.config.settlement;
        if (s.backend !== 'rpc') throw new Error('not rpc');
        const chain = chainClientOf(stack().ctx.config, s.rpcUrl);
        // The admin process's own run may take the fee first (it writes the authorization's nonce, then fails to
        // send): a run here then skips it once, and the next one tries to send it.
        const refusal = await until(
          () =>
            collectFeesOnce(stack().ctx, chain).then(
              () => undefined,
              (e: unknown) => e,
            ),
          (e) => e !== undefined,
          'the collector refused',
          30_000,
          false,
        );
        t.true(refusal instanceof OperatorCannotPay, String(refusal));
        t.regex(String((refusal as Error).message), /cannot pay the gas/);
        const p = await payment(stack(), id);
        t.is(p.feeTxHash, null);
        t.is(p.feeStatus, 'settled');
        t.is((await reservation(stack(), `${id}:fee`))?.status, 'open', 'the fee stays reserved for a later run');
        await fundGas(anvil, operator, parseEther('10'));
        const done = await until(
          () => payment(stack(), id),
          (x) => x.feeTxHash != null,
          'the fee collected',
        );
        t.is(done.feeStatus, 'settled');
      } finally {
        await fundGas(anvil, operator, parseEther('10'));
      }
    });

    /** A plan of `amounts` to fresh receivers (atomic USDC), 10 credits. */
    async function planPaying(amounts: bigint[]) {
      const builder = await stack().user();
      const receivers = await Promise.all(amounts.map(async () => (await freshAccount(anvil, 0n)).address));
      const plan = await createPlan(builder.api, {
        priceConfig: {
          priceType: 'FIXED_PRICE',
          tokenAddress: USDC.address,
          amounts: amounts.map(String),
          receivers,
        },
      });
      return { planId: plan.planId, receivers };
    }

    const orderRow = (id: string) => stack().ctx.db.em().findOne(ChainOrder, { id });
    const credits = async (u: User, planId: string) =>
      (await u.api.get(`/protocol/plans/${planId}/balance/${u.walletAddress}`)).body.balance as string;

    test('plan orders on chain: one receiver, or several in ONE transaction; credits minted after it succeeded', async (t) => {
      const operator = getAddress(await ensureOperatorWallet(stack().ctx));
      for (const amounts of [[1_000_000n], [600_000n, 400_000n, 1n]]) {
        const { planId, receivers } = await planPaying(amounts);
        const { u } = await paidUser(5_000_000n);
        const r = await u.api.post(`/protocol/plans/${planId}/order`);
        t.is(r.status, 200, r.text);
        const txId = r.body.txId as Hex;
        t.regex(txId, /^0x[0-9a-f]{64}$/);
        t.like(r.body, { planId, creditsGranted: '10', balance: '10' });
        const total = amounts.reduce((a, b) => a + b, 0n);
        t.is(r.body.amountPaid, total.toString());
        const receipt = await anvil.publicClient.getTransactionReceipt({ hash: txId });
        t.is(receipt.status, 'success');
        t.is(getAddress(receipt.from), operator, 'the operator sent it and paid the gas');
        t.is(getAddress(receipt.to ?? '0x'), amounts.length === 1 ? USDC.address : getAddress(MULTICALL3));
        for (const [k, to] of receivers.entries()) t.is(await usdc.balanceOf(to), amounts[k] ?? -1n);
        t.is(await usdc.balanceOf(u.walletAddress as Address), 5_000_000n - total);
        t.is(await credits(u, planId), '10');
        const order = await stack().ctx.db.em().findOneOrFail(PlanOrder, { id: r.body.orderId });
        t.is(order.txId, txId);
        t.is(order.amountPaid, total);
        t.like(await orderRow(r.body.orderId), { status: 'paid', txHash: txId });
        const legs = await stack().ctx.db.em().find(ChainReservation, { reference: r.body.orderId });
        t.is(legs.length, amounts.length);
        t.true(legs.every((l) => l.status === 'spent' || l.status === 'reflected'));
      }
    });

    test('a plan order the wallet cannot cover is 402 BCK.PAYMENT.0001 and sends nothing', async (t) => {
      const { planId } = await planPaying([1_000_000n]);
      const { u } = await paidUser(999_999n);
      const r = await u.api.post(`/protocol/plans/${planId}/order`);
      t.is(r.status, 402, r.text);
      t.is(r.body.code, 'BCK.PAYMENT.0001');
      t.is(await credits(u, planId), '0');
      t.is(await stack().ctx.db.em().count(ChainOrder, { buyerUserId: u.userId }), 0);
      t.is((await chainBalance(stack(), u.walletAddress))?.reserved, 0n);
    });

    test('a plan order whose transfer the chain refuses credits nothing and releases its legs (409 BCK.CHAIN.0004)', async (t) => {
      const { planId, receivers } = await planPaying([700_000n, 300_000n]);
      const { u } = await paidUser(1_000_000n);
      // Money leaves the wallet outside payroute after the balance was read: a transfer signed by the wallet, still
      // pending when the order is sent (automine off), mined in the same block before it.
      await anvil.testClient.setAutomine(false);
      try {
        const key = await custodialKeyOf(stack().ctx, getAddress(u.walletAddress));
        const outflow = {
          from: getAddress(u.walletAddress),
          to: (await freshAccount(anvil, 0n)).address,
          value: 500_000n,
          validAfter: 0n,
          validBefore: (await chainTimeNow()) + 3600n,
          nonce: randomNonce(),
        };
        const sig = signAuthorization(key, outflow, USDC, anvil.chainId);
        const relayer = await freshAccount(anvil);
        const s = stack().ctx.config.settlement;
        if (s.backend !== 'rpc') throw new Error('not rpc');
        const pendingOut = chainClientOf(stack().ctx.config, s.rpcUrl).submitTransfers(
          privateKeyToAccount(relayer.privateKey),
          [{ token: USDC.address, ...outflow, signature: sig }],
          60_000,
        );
        await until(
          () => anvil.publicClient.getTransactionCount({ address: relayer.address, blockTag: 'pending' }),
          (n) => n === 1,
          'the outflow pending',
          30_000,
          false,
        );
        const ordering = u.api.post(`/protocol/plans/${planId}/order`);
        // Either the node's estimate already refuses it, or it is sent and mined after the outflow, and reverts.
        const operator = getAddress(await ensureOperatorWallet(stack().ctx));
        const before = await anvil.publicClient.getTransactionCount({ address: operator, blockTag: 'latest' });
        await until(
          async () => ({
            pending: await anvil.publicClient.getTransactionCount({ address: operator, blockTag: 'pending' }),
            settled: await Promise.race([
              ordering.then(() => true),
              new Promise((r) => setTimeout(() => r(false), 50)),
            ]),
          }),
          (x) => x.pending > before || x.settled === true,
          'the order sent or refused',
          30_000,
          false,
        );
        await mine(anvil);
        const r = await ordering;
        await pendingOut;
        t.is(r.status, 409, r.text);
        t.is(r.body.code, 'BCK.CHAIN.0004');
        t.regex(r.body.details, /nothing was credited/);
        const orderId = JSON.parse(r.body.params).orderId as string;
        const row = await orderRow(orderId);
        t.is(row?.status, 'failed');
        if (row?.txHash != null) {
          t.is((await anvil.publicClient.getTransactionReceipt({ hash: row.txHash as Hex })).status, 'reverted');
        }
        for (const to of receivers) t.is(await usdc.balanceOf(to), 0n, 'no receiver was paid');
        t.is(await credits(u, planId), '0');
        t.is(await stack().ctx.db.em().count(PlanOrder, { id: orderId }), 0);
        const legs = await stack().ctx.db.em().find(ChainReservation, { reference: orderId });
        t.deepEqual(
          legs.map((l) => l.status),
          ['released', 'released'],
        );
      } finally {
        await anvil.testClient.setAutomine(true);
      }
    });

    test('an order not confirmed in time is 503 and credited once the chain has it, by the reconciler', async (t) => {
      const { planId, receivers } = await planPaying([250_000n]);
      const { u } = await paidUser(1_000_000n);
      await anvil.testClient.setAutomine(false);
      let orderId: string;
      try {
        // CHAIN_CONFIRM_TIMEOUT_MS=5000: the request gives up waiting; the transaction stays in the node's pool.
        const r = await u.api.post(`/protocol/plans/${planId}/order`);
        t.is(r.status, 503, r.text);
        t.is(r.body.code, 'BCK.CHAIN.0001');
        t.regex(r.body.details, /not confirmed/);
        orderId = JSON.parse(r.body.params).orderId as string;
        t.is((await orderRow(orderId))?.status, 'submitting');
        t.is(await credits(u, planId), '0');
      } finally {
        await anvil.testClient.setAutomine(true);
      }
      await mine(anvil);
      const paid = await until(
        () => orderRow(orderId),
        (o) => o?.status === 'paid',
        'the order finished by the reconciler',
      );
      t.regex(paid?.txHash ?? '', /^0x[0-9a-f]{64}$/);
      t.is(await usdc.balanceOf(receivers[0] as Address), 250_000n);
      t.is(await credits(u, planId), '10');
      const order = await stack().ctx.db.em().findOneOrFail(PlanOrder, { id: orderId });
      t.is(order.txId, paid?.txHash ?? null);
    });

    test('an order with an operator out of gas is 503 BCK.CHAIN.0003: nothing paid, nothing credited', async (t) => {
      const operator = getAddress(await ensureOperatorWallet(stack().ctx));
      const { planId, receivers } = await planPaying([100_000n]);
      const { u } = await paidUser(1_000_000n);
      await fundGas(anvil, operator, 0n);
      // Gas must cost something (see the fee collector's test above).
      await anvil.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei('1') });
      await mine(anvil);
      try {
        const r = await u.api.post(`/protocol/plans/${planId}/order`);
        t.is(r.status, 503, r.text);
        t.is(r.body.code, 'BCK.CHAIN.0003');
        t.regex(r.body.details, /cannot pay the gas/);
        t.is(await usdc.balanceOf(receivers[0] as Address), 0n);
        t.is(await credits(u, planId), '0');
        t.is((await chainBalance(stack(), u.walletAddress))?.reserved, 0n);
      } finally {
        await fundGas(anvil, operator, parseEther('10'));
      }
    });

    test('an x402 settle does not auto-order from a wallet on chain: 402 BCK.CREDITS.0003 naming why, nothing moves', async (t) => {
      const s = await seller(stack()); // 1 USDC for 10 credits
      const { u } = await paidUser(5_000_000n);
      const d = await delegation(u.api, { provider: 'erc4337', spendingLimitCents: 1000 });
      const p = await permission(u.api, { planId: s.plan.planId, delegationId: d });
      const r = await s.user.api.post('/x402/settle', {
        paymentRequired: paymentRequired({ planId: s.plan.planId }),
        x402AccessToken: p.x402AccessToken,
        maxAmount: '2',
        agentRequestId: rid(),
      });
      t.is(r.status, 402, r.text);
      t.is(r.body.code, 'BCK.CREDITS.0003');
      t.regex(r.body.details, /does not auto-order on chain/);
      t.is(await usdc.balanceOf(u.walletAddress as Address), 5_000_000n);
      t.like((await u.api.get(`/delegation/${d}`)).body, { amountSpentCents: '0' });
      t.is(await credits(u, s.plan.planId), '0');
    });

    test('the CLI reads wallets on chain and names the operator wallet with its gas; the faucet is refused', async (t) => {
      const { u } = await paidUser(1_234_567n);
      const b = await runCli(['wallets', 'balance', '--address', u.walletAddress.toLowerCase()], stack().env);
      t.is(b.code, 0, b.stderr);
      t.is(b.json.address, getAddress(u.walletAddress));
      t.is(b.json.backend, 'rpc');
      t.is(b.json.network, 'eip155:84532');
      t.regex(String(b.json.block), /^[0-9]+$/);
      t.deepEqual(b.json.balances, [
        { symbol: 'USDC', asset: USDC.address, balance: '1234567', reserved: '0', available: '1234567' },
        { symbol: 'EURC', asset: EURC.address, balance: '0', reserved: '0', available: '0' },
      ]);
      const o = await runCli(['wallets', 'address'], stack().env);
      t.is(o.code, 0, o.stderr);
      t.is(o.json.address, getAddress(await ensureOperatorWallet(stack().ctx)));
      t.is(o.json.gasWei, (await anvil.publicClient.getBalance({ address: o.json.address as Address })).toString());
      const f = await runCli(['faucet', '--address', u.walletAddress, '--amount', '1'], stack().env);
      t.is(f.code, 1);
      t.regex(String(f.json.message), /SETTLEMENT_BACKEND=rpc/);
    });
  },
  env,
  { serial: true },
);
