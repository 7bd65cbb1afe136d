// What must hold of a user's router payments after any fault (a database that stopped answering, a connection
// limit, a killed process): nothing half-written. Each assertion names the payment or the sum that broke.
import type { ExecutionContext } from 'ava';
import { DelegationTransaction, TokenLedger } from '../../shared/db/entities/index.js';
import { delegationRow, paymentRows } from './router-fixtures.js';
import type { Stack } from './stack.js';

export interface PaymentsLedger {
  readonly rows: Awaited<ReturnType<typeof paymentRows>>;
}

/**
 * For one user paying through one delegation from their own wallet, in the internal token ledger:
 * - one payment row per requestId;
 * - the delegation's spent cents equal the sum of its journal, and every journal entry belongs to a payment row (no
 *   cap charge without its row), each row's entries summing to its cap charge less a released fee leg;
 * - every row has exactly one merchant-leg debit of its amount from the buyer, a settled fee leg one fee debit, and
 *   nothing else moved the buyer's money.
 */
export async function assertPaymentsConsistent(
  t: ExecutionContext,
  s: Stack,
  user: { userId: string; walletAddress: string },
  delegationId: string,
): Promise<PaymentsLedger> {
  const rows = (await paymentRows(s, user.userId)).filter((r) => r.delegationId === delegationId);
  t.is(new Set(rows.map((r) => r.requestId)).size, rows.length, 'one payment per requestId');

  const d = await delegationRow(s, delegationId);
  const journal = await s.ctx.db.em().find(DelegationTransaction, { delegationId });
  t.is(
    d.amountSpentCents,
    journal.reduce((sum, x) => sum + x.amountCents, 0n),
    'the cap equals the sum of its journal',
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const entry of journal) t.true(byId.has(entry.reference ?? ''), `journal entry ${entry.id} has its payment row`);
  for (const r of rows) {
    const charged = journal.filter((x) => x.reference === r.id).reduce((sum, x) => sum + x.amountCents, 0n);
    const expected = r.capChargedCents - (r.feeStatus === 'released' ? r.feeCents : 0n);
    t.is(charged, expected, `payment ${r.id} (${r.status}, fee ${r.feeStatus}): its cap charges`);
  }

  const moves = await s.ctx.db.em().find(TokenLedger, { address: user.walletAddress, delta: { $lt: 0n } });
  for (const r of rows) {
    const mine = moves.filter((m) => m.reference === r.id);
    const fee = r.feeStatus === 'settled' ? [r.feeAmount] : [];
    t.deepEqual(
      mine.map((m) => -m.delta).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      [r.amount, ...fee].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      `payment ${r.id}: one merchant-leg debit${fee.length > 0 ? ' and one fee debit' : ''}`,
    );
  }
  const paid = new Set(rows.map((r) => r.id));
  for (const m of moves.filter((x) => x.kind !== 'faucet'))
    t.true(paid.has(m.reference ?? ''), `ledger debit ${m.id} (${m.kind}) belongs to a payment`);
  return { rows };
}
