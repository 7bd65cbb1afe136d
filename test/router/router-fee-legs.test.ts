// A mode B fee leg is earned by an answer the caller received: on the streaming proxy it settles once
// the paid body was relayed to its end, and a paid answer that breaks off after some bytes releases it (its cap
// share given back, no fee moved). A leg nobody resolved (the recording failed, the proxy stopped mid-call) is
// released by the admin's sweep once older than ROUTER_FEE_SWEEP_AFTER_SECS, exactly once.
import test from 'ava';
import { RouterPayment, TokenLedger } from '../../shared/db/entities/index.js';
import { releaseStaleFeeLegs } from '../../admin/jobs/fee-sweep.js';
import { forEachDb } from '../support/matrix.js';
import {
  FEE_RECIPIENT,
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  type User,
  delegationRow,
  delegationTransactions,
  scriptedMerchant,
  startMerchants,
  payingUser,
} from '../support/router-fixtures.js';

const PRICE = 10_000n; // fee 500 atomic; cap charge 2 cents (1 merchant leg + 1 fee)
let m: Merchants;
/** /whole: 402, then a paid 200 of 2000 bytes; /broken: 402, then a paid 200 declaring 100000 bytes, 1000 sent, reset. */
let merchant: ScriptedMerchant;

test.before(async () => {
  m = await startMerchants(PRICE);
  const required = (await fetch(m.v2.url + m.v2.paidPath)).headers.get('payment-required') ?? '';
  merchant = await scriptedMerchant((req, res) => {
    if (req.headers['payment-signature'] === undefined) {
      res.writeHead(402, { 'payment-required': required });
      res.end('{}');
    } else if (req.url === '/whole') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2000' });
      res.end('x'.repeat(2000));
    } else {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100000' });
      res.write('x'.repeat(1000), () => setTimeout(() => res.socket?.destroy(), 50));
    }
  });
});
test.after.always(async () => {
  await Promise.all([m?.close(), merchant?.close()]);
});

let n = 0;
const rid = () => `fee-${Date.now()}-${++n}`;

forEachDb(
  ({ stack, test }) => {
    const paidUser = () => payingUser(stack(), m.chain, 100_000_000n, 1000);

    /** The payment once its fee leg left `reserved`: it is resolved just after the relay ended (at most 5 s). */
    async function resolvedRow(id: string) {
      // A fresh EntityManager per read: one fork would answer from its identity map.
      for (let i = 0; i < 50; i += 1) {
        const row = await stack().ctx.db.em().findOneOrFail(RouterPayment, { id });
        if (row.feeStatus !== 'reserved') return row;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return stack().ctx.db.em().findOneOrFail(RouterPayment, { id });
    }

    /** The fee journal rows of one payment (the fee recipient's balance is shared by the tests running at once). */
    async function feeJournal(id: string) {
      const rows = await stack().ctx.db.em().find(TokenLedger, { reference: id, kind: 'router_fee' });
      return rows.map((r) => [r.address, r.delta]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
    }

    /** The proxy's answer read to its end or to its failure: the status, the bytes that arrived, how it ended. */
    async function proxied(u: User, delegationId: string, path: string) {
      const res = await fetch(`${stack().baseUrl}/router/proxy`, {
        headers: {
          authorization: `Bearer ${u.apiKey}`,
          'x-router-target-url': merchant.url + path,
          'x-router-delegation-id': delegationId,
          'x-router-request-id': rid(),
        },
      });
      let bytes = 0;
      let broke = false;
      const chunks: Uint8Array[] = [];
      try {
        for await (const chunk of res.body ?? []) {
          bytes += (chunk as Uint8Array).length;
          if (res.status !== 200) chunks.push(chunk as Uint8Array);
        }
      } catch {
        broke = true;
      }
      // A 502 names the payment in its body (the answer broke off before its head was relayed).
      const named =
        res.status === 502
          ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { paymentId?: string }).paymentId
          : undefined;
      return { status: res.status, paymentId: res.headers.get('x-router-payment-id') ?? named ?? null, bytes, broke };
    }

    test('a paid answer relayed whole settles its fee leg: the fee moves, the cap keeps both cents', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, delegationId, '/whole');
      t.is(r.status, 200);
      t.is(r.bytes, 2000);
      t.false(r.broke);
      const row = await resolvedRow(r.paymentId ?? '');
      t.is(row.feeStatus, 'settled');
      t.deepEqual(
        await feeJournal(row.id),
        [
          [FEE_RECIPIENT, 500n],
          [u.walletAddress, -500n],
        ].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
      );
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
    });

    test('a paid answer that breaks off after its first bytes releases the fee leg: no fee moved, 1 cent back', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, delegationId, '/broken');
      // Usually the head goes out with the first bytes and the body then breaks off; when the payment's bookkeeping
      // outlasts the merchant (a loaded machine), the break comes first and the answer is a 502 naming the payment.
      if (r.status === 200) {
        t.true(r.broke, 'the caller sees the body end early');
        t.true(r.bytes < 100_000);
      } else {
        t.is(r.status, 502);
      }
      t.truthy(r.paymentId);
      const row = await resolvedRow(r.paymentId ?? '');
      t.is(row.feeStatus, 'released');
      t.deepEqual(await feeJournal(row.id), [], 'no fee moved');
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n, 'the merchant leg stays charged');
      const kinds = (await delegationTransactions(stack(), delegationId)).map((x) => [x.kind, x.amountCents]);
      t.deepEqual(kinds, [
        ['reserve', 2n],
        ['release', -1n],
      ]);
    });

    test('the sweep releases a fee leg left reserved once it is old enough, once, and leaves newer ones alone', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, delegationId, '/whole');
      t.is(r.status, 200);
      const id = r.paymentId ?? '';
      await resolvedRow(id);
      // The row as a failed recording leaves it: Issued, fee leg reserved (its cap share still held).
      const em = stack().ctx.db.em();
      await em.nativeUpdate(RouterPayment, { id }, { feeStatus: 'reserved', status: 'Issued' });
      const journal = await feeJournal(id);
      const spent = (await delegationRow(stack(), delegationId)).amountSpentCents;

      t.is(await releaseStaleFeeLegs(stack().ctx, new Date(Date.now() - 3_600_000)), 0, 'younger than the bound: kept');
      t.is((await em.findOneOrFail(RouterPayment, { id })).feeStatus, 'reserved');

      // A `Pending` row an earlier version left (a claim written before the cap was charged) is never swept: its fee
      // was never reserved on the delegation.
      const other = await paidUser();
      const pending = await proxied(other.u, other.delegationId, '/whole');
      await resolvedRow(pending.paymentId ?? '');
      await em.nativeUpdate(
        RouterPayment,
        { id: pending.paymentId ?? '' },
        { feeStatus: 'reserved', status: 'Pending' },
      );
      const otherSpent = (await delegationRow(stack(), other.delegationId)).amountSpentCents;

      // Two sweeps at once (other tests' legs may be swept too: only this payment's rows are asserted).
      await Promise.all([
        releaseStaleFeeLegs(stack().ctx, new Date(Date.now() + 1000)),
        releaseStaleFeeLegs(stack().ctx, new Date(Date.now() + 1000)),
      ]);
      t.is((await stack().ctx.db.em().findOneOrFail(RouterPayment, { id })).feeStatus, 'released');
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, spent - 1n, 'released once');
      t.deepEqual(await feeJournal(id), journal, 'the sweep moves no fee');
      const releases = (await delegationTransactions(stack(), delegationId)).filter((x) => x.kind === 'release');
      t.is(releases.length, 1);
      t.like(releases[0], { amountCents: -1n, reference: id, description: 'fee leg never resolved (swept)' });
      t.is(
        (
          await stack()
            .ctx.db.em()
            .findOneOrFail(RouterPayment, { id: pending.paymentId ?? '' })
        ).feeStatus,
        'reserved',
        'Pending: left alone',
      );
      t.is((await delegationRow(stack(), other.delegationId)).amountSpentCents, otherSpent);
    });
  },
  PAID_ENV,
  { serial: true },
); // the sweep releases every old enough leg of the database: one test at a time
