// A proxy killed with SIGKILL in the middle of paid load (no drain, no clean-up: a power cut of the process), then
// started again, on SQLite and PostgreSQL. What a payments team must be able to trust afterwards: every payment the
// merchant settled is in our records and the token ledger exactly once, no requestId was paid twice (the clients
// retry every call that did not answer, with the same requestId), every cap equals the sum of its charges, and the
// fee legs the dead process left reserved are given back by the sweep.
import test from 'ava';
import { releaseStaleFeeLegs } from '../../admin/jobs/fee-sweep.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { assertPaymentsWhole } from '../support/payment-records.js';
import { until } from '../support/processes.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  createDelegation,
  fund,
  paymentRows,
  relayMerchant,
  startMerchants,
} from '../support/router-fixtures.js';

const PRICE = 10_000n;
const CALLS = 60;
const IN_FLIGHT = 6;
/** Paid requests that go through before the relay starts holding them: the kill comes well inside the load. */
const THROUGH = 12;
/** Held at the merchant when the proxy is killed. */
const HELD_AT_KILL = 4;

let m: Merchants;
/**
 * The v2 merchant behind a relay that, once `holdAfter` paid requests went through, holds the next ones until
 * `open()`: the proxy is killed while those are at the merchant, paid for but not answered. The merchant settles
 * them after the proxy has died: the case a crash makes hard.
 */
let relay: ScriptedMerchant;
let holdAfter = Number.POSITIVE_INFINITY;
let passed = 0;
const held: (() => void)[] = [];
let opened = false;
const open = () => {
  opened = true;
  for (const go of held.splice(0)) go();
};

test.before(async () => {
  m = await startMerchants(PRICE);
  relay = await relayMerchant(m.v2.url, async (req) => {
    if (req.headers['payment-signature'] !== undefined && !opened && ++passed > holdAfter)
      await new Promise<void>((go) => held.push(go));
  });
});
test.after.always(async () => {
  open();
  await relay?.close();
  await m?.close();
});

forEachDb(
  ({ kind, stack, test }) => {
    test('SIGKILL mid-load, restart: settled payments recorded once, no requestId paid twice, caps exact, fee legs swept', async (t) => {
      const s = stack();
      const u = await s.user();
      await fund(s, m.chain, u, 1_000_000_000n);
      const delegationId = await createDelegation(u, 100_000);
      const url = `${relay.url}/paid`;
      passed = 0;
      opened = false;
      holdAfter = THROUGH;
      const settledByMerchant = () => m.chain.transfers.filter((x) => x.from === u.walletAddress);
      const requestIds = Array.from({ length: CALLS }, (_, i) => `crash-${kind}-${i}`);

      const first = await s.spawn('proxy');
      const api = apiClient(`${first.url}/api/v1`, u.apiKey);
      const answered = new Map<string, number>();
      let next = 0;
      const caller = async () => {
        for (let i = next++; i < CALLS; i = next++) {
          const requestId = requestIds[i] ?? '';
          try {
            const r = await api.post('/router/route', { requestId, delegationId, url });
            answered.set(requestId, r.status);
          } catch {
            // The connection died with the process: the client does not know whether it paid.
          }
        }
      };
      const killer = (async () => {
        await until('paid calls held at the merchant', () => held.length >= HELD_AT_KILL, 120_000, 10);
        first.child.kill('SIGKILL');
        await first.exited;
        // The merchant goes on with the paid requests it holds and settles them: the proxy will never hear of it.
        open();
      })();
      await Promise.all([killer, ...Array.from({ length: IN_FLIGHT }, caller)]);
      t.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
      await until('the merchant settling what it held', () => settledByMerchant().length >= THROUGH + HELD_AT_KILL);
      t.true(answered.size < CALLS, 'the kill cut the load short');
      t.true([...answered.values()].every((status) => status === 200));

      // A new process; every call that got no answer is retried with its requestId, as a client must.
      const second = await s.spawn('proxy');
      const again = apiClient(`${second.url}/api/v1`, u.apiKey);
      for (const requestId of requestIds.filter((id) => !answered.has(id))) {
        const r = await again.post('/router/route', { requestId, delegationId, url });
        // 200: the first attempt never committed its claim; 409: it did, and the answer names that payment.
        t.true(r.status === 200 || (r.status === 409 && r.body.code === 'BCK.ROUTER.0002'), `${requestId}: ${r.text}`);
      }

      // No requestId paid twice, no payment half-written, every payment the merchant settled recorded once.
      const who = { userId: u.userId, walletAddress: u.walletAddress, delegationId };
      const rows = await assertPaymentsWhole(t, s, who, settledByMerchant());
      t.is(rows.length, CALLS);

      // The sweep gives back the fee legs the killed process left reserved (as the admin process does after
      // ROUTER_FEE_SWEEP_AFTER_SECS; here at once), and only those.
      const leftReserved = (await paymentRows(s, u.userId)).filter((r) => r.feeStatus === 'reserved').length;
      t.log(
        `${answered.size} answered before the kill, ${settledByMerchant().length} settled by the merchant, ${leftReserved} fee legs left reserved`,
      );
      const released = await releaseStaleFeeLegs(s.ctx, new Date(Date.now() + 1000), 1000);
      t.is(released, leftReserved);
      t.is((await paymentRows(s, u.userId)).filter((r) => r.feeStatus === 'reserved').length, 0);
      t.is(await releaseStaleFeeLegs(s.ctx, new Date(Date.now() + 1000), 1000), 0, 'released once');

      // The cap still equals the sum of its charges and releases, the released fee legs' shares given back.
      await assertPaymentsWhole(t, s, who, settledByMerchant());
      t.true(leftReserved >= HELD_AT_KILL, 'the held calls left their fee legs reserved');
      await second.stop();
    });
  },
  PAID_ENV,
  // One relay for both databases.
  { serial: true },
);
