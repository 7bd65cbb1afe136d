// Races around a payment's outcome (mode A and router flow step 8, docs/architecture.md): the same txHash posted to
// /router/payments/{id}/settled many times at once is a no-op for every one of them (any hex case); a mode B
// payment its caller records /settled while the paid hop is still running keeps that status, and its fee leg is
// still resolved exactly once; a payment to one's own wallet is refused unpaid, whatever the balance.
import test from 'ava';
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import { forEachDb } from '../support/matrix.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  createDelegation,
  delegationRow,
  delegationTransactions,
  fund,
  ledgerBalance,
  paymentRow,
  paymentRows,
  scriptedMerchant,
  startMerchants,
} from '../support/router-fixtures.js';

const PRICE = 10_000n; // fee 500 atomic; cap charge 2 cents (1 merchant leg + 1 fee)
let m: Merchants;
/**
 * Answers the unpaid call with the v2 merchant's 402; holds the paid hop of path P until the test releases
 * `gates.get(P)`, then answers 402 again (at most 20 s).
 */
let held: ScriptedMerchant;
interface Gate {
  arrived: () => void;
  hold: Promise<void>;
}
const gates = new Map<string, Gate>();

test.before(async () => {
  m = await startMerchants(PRICE);
  const required = (await fetch(m.v2.url + m.v2.paidPath)).headers.get('payment-required') ?? '';
  held = await scriptedMerchant(async (req, res) => {
    const gate = gates.get(req.url ?? '');
    if (req.headers['payment-signature'] !== undefined && gate !== undefined) {
      gate.arrived();
      await Promise.race([gate.hold, new Promise((r) => setTimeout(r, 20_000))]);
    }
    res.writeHead(402, { 'payment-required': required });
    res.end('{}');
  });
});
test.after.always(async () => {
  await Promise.all([m?.close(), held?.close()]);
});

let n = 0;
const rid = () => `settled-${Date.now()}-${++n}`;
const hash = (c: string) => `0x${c.repeat(64)}`; // c: one hex digit

async function v2Accepts(): Promise<Record<string, unknown>[]> {
  const r = await fetch(m.v2.url + m.v2.paidPath);
  const pr = decodePaymentRequiredV2(r.headers.get('payment-required') ?? '');
  if (pr.type !== 'decoded') throw new Error(pr.reason);
  return pr.value.accepts as Record<string, unknown>[];
}

forEachDb(({ kind, stack, test }) => {
  async function paidUser(amount = 100_000_000n) {
    const u = await stack().user();
    if (amount > 0n) await fund(stack(), m.chain, u, amount);
    return { u, delegationId: await createDelegation(u, 1000) };
  }

  test('20 parallel /settled with one hash: every one 200 with it; the hash is kept in lower case', async (t) => {
    const { u, delegationId } = await paidUser();
    const minted = await u.api.post('/router/payments', {
      delegationId,
      protocol: 'x402',
      target: { accepts: await v2Accepts() },
      requestId: rid(),
    });
    t.is(minted.status, 200, minted.text);
    const id = minted.body.paymentId as string;
    const upper = `0x${'AB'.repeat(32)}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => u.api.post(`/router/payments/${id}/settled`, { txHash: upper })),
    );
    t.deepEqual(
      results.filter((r) => r.status !== 200).map((r) => r.text),
      [],
    );
    t.true(results.every((r) => r.body.status === 'Settled' && r.body.txHash === upper.toLowerCase()));
    const lower = await u.api.post(`/router/payments/${id}/settled`, { txHash: upper.toLowerCase() });
    t.is(lower.status, 200, 'the same hash in another case is the same hash');
    t.like(await paymentRow(stack(), id), { status: 'Settled', txHash: upper.toLowerCase() });
    const other = await u.api.post(`/router/payments/${id}/settled`, { txHash: hash('c') });
    t.is(other.status, 409);
    t.is(other.body.code, 'BCK.ROUTER.0005');
  });

  test('recorded /settled while its paid hop runs: stays Settled, the 402 answer still releases the fee once', async (t) => {
    const { u, delegationId } = await paidUser();
    const path = `/hold-${kind}`;
    let release: () => void = () => {};
    let arrivedNow: () => void = () => {};
    const arrived = new Promise<void>((r) => {
      arrivedNow = r;
    });
    gates.set(path, {
      arrived: () => arrivedNow(),
      hold: new Promise<void>((r) => {
        release = r;
      }),
    });
    const routing = u.api.post('/router/route', { requestId: rid(), delegationId, url: `${held.url}${path}` });
    await arrived; // the payment is committed and its credential is at the merchant
    const [row] = await paymentRows(stack(), u.userId);
    const id = row?.id ?? '';
    const settled = await u.api.post(`/router/payments/${id}/settled`, { txHash: hash('e') });
    t.is(settled.status, 200, settled.text);
    release();
    const r = await routing;
    t.is(r.status, 200, r.text);
    t.is(r.body.status, 402);
    t.is(r.body.payment.paymentId, id);
    t.is(r.body.payment.status, 'Settled', 'the answer tells the status the payment has');
    t.like(await paymentRow(stack(), id), { status: 'Settled', txHash: hash('e'), feeStatus: 'released' });
    // Cap: 2 reserved, the fee's 1 cent released once.
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n);
    t.deepEqual(
      (await delegationTransactions(stack(), delegationId)).map((x) => [x.kind, x.amountCents]),
      [
        ['reserve', 2n],
        ['release', -1n],
      ],
    );
    t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n - PRICE, 'merchant leg kept, no fee moved');
  });

  // Paying one's own wallet moves nothing to anyone but charges the cap and the fee: it is refused before the
  // balance is looked at (it used to be a 402 BCK.ROUTER.0009 when empty and a paid self-transfer when funded).
  test("mode A paying one's own wallet: 400 BCK.ROUTER.0001, nothing written, empty or funded", async (t) => {
    const { u, delegationId } = await paidUser(0n);
    const accepts = (await v2Accepts()).map((a) => ({ ...a, payTo: u.walletAddress }));
    const mint = () =>
      u.api.post('/router/payments', { delegationId, protocol: 'x402', target: { accepts }, requestId: rid() });
    for (const funds of [0n, 100_000n]) {
      if (funds > 0n) await fund(stack(), m.chain, u, funds);
      const r = await mint();
      t.is(r.status, 400, r.text);
      t.is(r.body.code, 'BCK.ROUTER.0001');
      t.is(JSON.parse(r.body.params).reason, 'payee_is_payer');
      t.is((await paymentRows(stack(), u.userId)).length, 0);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
      t.deepEqual(await delegationTransactions(stack(), delegationId), []);
      t.is(await ledgerBalance(stack(), u.walletAddress), funds);
    }
  });
}, PAID_ENV);
