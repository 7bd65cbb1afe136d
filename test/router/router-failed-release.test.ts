// The sandbox ledger gives a failed payment back once its authorization has expired: a merchant that answered the
// paid call with another 402 keeps the merchant leg (it could still submit the authorization on a chain) until
// validBefore, then the payment is Expired, the leg goes back to the buyer and its cap charge to the delegation,
// exactly once however many admin processes run the release. A payee that spent the leg keeps it.
import test from 'ava';
import { getAddress } from 'viem';
import { releaseExpiredFailures } from '../../admin/jobs/failed-leg-release.js';
import { emSql } from '../../shared/db/sql.js';
import { MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { forEachDb } from '../support/matrix.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  delegationRow,
  delegationTransactions,
  fourOhTwoAgainMerchant,
  ledgerBalance,
  ledgerMoves,
  paymentRow,
  payingUser,
  startMerchants,
} from '../support/router-fixtures.js';

const PRICE = 10_000n; // fee 500 atomic; cap charge 2 cents (1 merchant leg + 1 fee)
const FUNDS = 100_000_000n;
const PAYEE = getAddress(MERCHANT_V2);
let m: Merchants;
let again: ScriptedMerchant;

test.before(async () => {
  m = await startMerchants(PRICE);
  again = await fourOhTwoAgainMerchant(m.v2);
});
test.after.always(async () => {
  await Promise.all([m?.close(), again?.close()]);
});

let n = 0;
const rid = () => `failed-${Date.now()}-${++n}`;
const HOUR_AGO = () => new Date(Date.now() - 3_600_000);
const SOON = () => new Date(Date.now() + 1_000);

forEachDb(
  ({ stack, test }) => {
    async function failedPayment() {
      const { u, delegationId } = await payingUser(stack(), m.chain, FUNDS, 1000);
      const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${again.url}/paid` });
      if (r.body?.payment?.status !== 'Failed') throw new Error(`expected a Failed payment: ${r.text}`);
      return { u, delegationId, paymentId: String(r.body.payment.paymentId) };
    }

    test('a Failed payment is given back once its authorization expired: Expired, leg refunded, cap released, once', async (t) => {
      const { u, delegationId, paymentId } = await failedPayment();
      const settled = await u.api.post('/router/route', {
        requestId: rid(),
        delegationId,
        url: m.v2.url + m.v2.paidPath,
      });
      t.is(settled.body.payment.status, 'Settled');
      t.is(await ledgerBalance(stack(), u.walletAddress), FUNDS - 2n * PRICE - 500n, 'both legs and one fee left');
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 3n, '1 (failed leg) + 2 (settled)');
      const payeeBefore = await ledgerBalance(stack(), PAYEE);

      t.deepEqual(await releaseExpiredFailures(stack().ctx, HOUR_AGO()), { released: 0, kept: [] }, 'not expired');
      t.is((await paymentRow(stack(), paymentId))?.status, 'Failed');

      // Two admin processes' runs at once (one of them paging one payment at a time): one release.
      const runs = await Promise.all([
        releaseExpiredFailures(stack().ctx, SOON()),
        releaseExpiredFailures(stack().ctx, SOON(), 1),
      ]);
      t.is(runs[0].released + runs[1].released, 1);
      t.is((await paymentRow(stack(), paymentId))?.status, 'Expired');
      t.is((await paymentRow(stack(), settled.body.payment.paymentId))?.status, 'Settled', 'a Settled one stays');
      t.is(await ledgerBalance(stack(), u.walletAddress), FUNDS - PRICE - 500n, 'the failed leg came back');
      t.is(await ledgerBalance(stack(), PAYEE), payeeBefore - PRICE);
      t.deepEqual(await ledgerMoves(stack(), paymentId), [
        ['router', u.walletAddress, PAYEE, PRICE],
        ['router_refund', PAYEE, u.walletAddress, PRICE],
      ]);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n, 'only the settled payment is charged');
      const mine = (await delegationTransactions(stack(), delegationId)).filter((x) => x.reference === paymentId);
      t.deepEqual(
        mine.map((x) => [x.kind, x.amountCents, x.description]),
        [
          ['reserve', 2n, 'router route x402'],
          ['release', -1n, 'fee leg not settled'],
          ['release', -1n, 'failed payment: authorization expired'],
        ],
      );
      t.deepEqual(await releaseExpiredFailures(stack().ctx, SOON()), { released: 0, kept: [] }, 'nothing twice');
    });

    test('a payee that no longer holds the leg keeps it: the payment stays Failed and nothing moves', async (t) => {
      const { u, delegationId, paymentId } = await failedPayment();
      await emSql(stack().ctx.db.em(), stack().ctx.db.dialect).run(
        'update token_balance set balance = 0 where address = ?',
        [PAYEE],
      );
      const r = await releaseExpiredFailures(stack().ctx, SOON());
      t.deepEqual(r, { released: 0, kept: [paymentId] });
      // Paged one at a time, a kept payment is passed over, not retried for ever within the run.
      t.deepEqual(await releaseExpiredFailures(stack().ctx, SOON(), 1), { released: 0, kept: [paymentId] });
      t.is((await paymentRow(stack(), paymentId))?.status, 'Failed');
      t.is(await ledgerBalance(stack(), u.walletAddress), FUNDS - PRICE);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n);
      t.is((await ledgerMoves(stack(), paymentId)).length, 1);
    });
  },
  PAID_ENV,
  { serial: true },
); // the release takes every expired failure of the database: one test at a time
