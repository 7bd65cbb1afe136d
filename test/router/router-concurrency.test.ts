// Concurrency of router spends (router flow steps 2, 3 and 6, docs/architecture.md): many parallel paid routes against a cap that fits
// exactly K payments, many parallel duplicates of one requestId, both through one proxy process and through TWO
// proxy processes on one PostgreSQL; and the per-user in-flight limit (429) at its default.
//
// N = 500 parallel routes per run (ROUTER_CONCURRENCY_N overrides it). On this 2-core machine a run of N = 500
// (K = 20 paid through the official v2 merchant, the rest refused after the probe) takes a few seconds per
// database on an idle machine.
import test from 'ava';
import { getAddress } from 'viem';
import { MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { forEachDb } from '../support/matrix.js';
import {
  type Merchants,
  RACE_ENV,
  type ScriptedMerchant,
  type User,
  createDelegation,
  delegationRow,
  delegationTransactions,
  ledgerBalance,
  payingUser,
  paymentRows,
  scriptedMerchant,
  startMerchants,
} from '../support/router-fixtures.js';
import { apiClient } from '../support/http.js';
import { startStack } from '../support/stack.js';

const PRICE = 10_000n; // cap charge 2 cents
const N = Number(process.env.ROUTER_CONCURRENCY_N ?? 500);
const K = 20;
const DUPES = 100;
let m: Merchants;
let slow: ScriptedMerchant;
let releaseSlow: () => void = () => {};
const slowGate = new Promise<void>((r) => {
  releaseSlow = r;
});

test.before(async () => {
  m = await startMerchants(PRICE);
  // Holds every call until the test releases them (at most 120 s), so "in flight" does not depend on timing.
  slow = await scriptedMerchant(async (_req, res) => {
    await Promise.race([slowGate, new Promise((r) => setTimeout(r, 120_000))]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"slow":true}');
  });
});
test.after.always(async () => {
  await Promise.all([m?.close(), slow?.close()]);
});

let seq = 0;
const rid = (p: string) => `${p}-${Date.now()}-${++seq}`;

forEachDb(
  ({ kind, stack, test }) => {
    const paidUser = (limitCents: number) => payingUser(stack(), m.chain, 1_000_000_000n, limitCents);

    async function capRace(t: import('ava').ExecutionContext, u: User, delegationId: string, proxies: string[]) {
      const url = m.v2.url + m.v2.paidPath;
      const clients = proxies.map((p) => apiClient(`${p}/api/v1`, u.apiKey));
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          (clients[i % clients.length] ?? u.api).post('/router/route', { requestId: rid('cap'), delegationId, url }),
        ),
      );
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 402);
      t.deepEqual(
        results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.text),
        [],
        'only 200 and 402',
      );
      t.is(ok.length, K);
      t.true(ok.every((r) => r.body.paid === true && r.body.payment.status === 'Settled'));
      t.true(refused.every((r) => r.body.code === 'BCK.ROUTER.0003'));
      const charged = ok.reduce((s, r) => s + BigInt(r.body.payment.fee.capChargedCents), 0n);
      const d = await delegationRow(stack(), delegationId);
      t.is(d.amountSpentCents, charged);
      t.is(d.amountSpentCents, BigInt(2 * K));
      const rows = await paymentRows(stack(), u.userId);
      t.is(rows.length, K, 'refused calls leave no payment row');
      t.is(m.chain.transfers.filter((x) => x.from === u.walletAddress).length, K);
      t.is(await ledgerBalance(stack(), u.walletAddress), 1_000_000_000n - BigInt(K) * (PRICE + 500n));
      const reserves = (await delegationTransactions(stack(), delegationId)).filter((x) => x.kind === 'reserve');
      t.is(reserves.length, K);
    }

    async function dupeRace(t: import('ava').ExecutionContext, u: User, delegationId: string, proxies: string[]) {
      const url = m.v2.url + m.v2.paidPath;
      const requestId = rid('dup');
      const clients = proxies.map((p) => apiClient(`${p}/api/v1`, u.apiKey));
      const results = await Promise.all(
        Array.from({ length: DUPES }, (_, i) =>
          (clients[i % clients.length] ?? u.api).post('/router/route', { requestId, delegationId, url }),
        ),
      );
      const ok = results.filter((r) => r.status === 200);
      t.is(
        ok.length,
        1,
        results
          .filter((r) => r.status !== 409)
          .map((r) => r.text)
          .join('\n'),
      );
      const paymentId = ok[0]?.body.payment.paymentId;
      const dupes = results.filter((r) => r.status === 409);
      t.is(dupes.length, DUPES - 1);
      t.true(
        dupes.every((r) => r.body.code === 'BCK.ROUTER.0002' && r.body.paymentId === paymentId),
        JSON.stringify(dupes.find((r) => r.body.paymentId !== paymentId)?.body),
      );
      t.is((await paymentRows(stack(), u.userId)).filter((r) => r.requestId === requestId).length, 1);
      t.is(
        m.chain.transfers.filter((x) => x.from === u.walletAddress && x.to === getAddress(MERCHANT_V2)).length >= 1,
        true,
      );
    }

    test(`${N} parallel paid routes, cap fits exactly ${K}: ${K} paid, the rest 402 BCK.ROUTER.0003`, async (t) => {
      const { u, delegationId } = await paidUser(2 * K);
      await capRace(t, u, delegationId, [stack().proxyUrl]);
    });

    test(`${DUPES} parallel routes with one requestId: one payment, ${DUPES - 1} x 409 naming it`, async (t) => {
      const { u, delegationId } = await paidUser(1000);
      await dupeRace(t, u, delegationId, [stack().proxyUrl]);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
    });

    test(`${DUPES} parallel routes with one requestId against a cap too small: every one refused, no 409 names a payment`, async (t) => {
      // The cap (1 cent) cannot take the 2-cent charge: the issuance transaction rolls the payment row back, so
      // the waiting duplicates must not be told its paymentId (it never existed); they meet 409 without one, or,
      // once the claim is given back, the same 402.
      const { u, delegationId } = await paidUser(1);
      const url = m.v2.url + m.v2.paidPath;
      const requestId = rid('dup-refused');
      const results = await Promise.all(
        Array.from({ length: DUPES }, () => u.api.post('/router/route', { requestId, delegationId, url })),
      );
      t.deepEqual(
        results
          .filter(
            (r) =>
              !(r.status === 402 && r.body.code === 'BCK.ROUTER.0003') &&
              !(r.status === 409 && r.body.code === 'BCK.ROUTER.0002'),
          )
          .map((r) => r.text),
        [],
      );
      t.true(results.some((r) => r.status === 402));
      t.deepEqual(
        results.filter((r) => r.status === 409 && r.body.paymentId !== undefined).map((r) => r.text),
        [],
      );
      t.is((await paymentRows(stack(), u.userId)).length, 0);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
    });

    if (kind === 'postgresql') {
      test('two proxy processes on one PostgreSQL: the cap and the requestId still hold', async (t) => {
        const second = await stack().spawn('proxy');
        try {
          const a = await paidUser(2 * K);
          await capRace(t, a.u, a.delegationId, [stack().proxyUrl, second.url]);
          const b = await paidUser(1000);
          await dupeRace(t, b.u, b.delegationId, [stack().proxyUrl, second.url]);
          t.is((await delegationRow(stack(), b.delegationId)).amountSpentCents, 2n);
        } finally {
          await second.stop();
        }
      });
    }
  },
  // The N clients run in this process too: RACE_ENV's generous upstream timeouts, and the races of the two
  // databases one after the other (serial), not on top of each other. What is asserted is unchanged.
  RACE_ENV,
  { serial: true },
);

test('default ROUTER_MAX_CONCURRENT_PER_USER (10): 15 parallel slow calls -> 5 x 429 BCK.ROUTER.0007', async (t) => {
  const s = await startStack('sqlite', { ROUTER_ALLOW_PRIVATE_TARGETS: 'true' });
  try {
    const u = await s.user();
    const delegationId = await createDelegation(u, 100);
    let settled = 0;
    const pending = Array.from({ length: 15 }, () =>
      u.api.post('/router/route', { requestId: rid('slow'), delegationId, url: `${slow.url}/x` }).finally(() => {
        settled++;
      }),
    );
    // Ten calls are held at the merchant; the other five must already have been refused.
    const deadline = Date.now() + 120_000;
    while ((slow.seen.length < 10 || settled < 5) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    t.is(slow.seen.length, 10, 'exactly ten calls reached the merchant');
    releaseSlow();
    const results = await Promise.all(pending);
    const limited = results.filter((r) => r.status === 429);
    t.is(results.filter((r) => r.status === 200).length, 10);
    t.is(limited.length, 5);
    t.true(limited.every((r) => r.body.code === 'BCK.ROUTER.0007' && r.body.retryable === true));
    // Once they finished, the slots are free again.
    const after = await u.api.post('/router/route', { requestId: rid('slow'), delegationId, url: `${slow.url}/x` });
    t.is(after.status, 200);
  } finally {
    await s.stop();
  }
});
