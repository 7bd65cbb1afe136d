// Giving a payment's cap charge back to its delegation (and its organization budget): a released fee leg, an
// unpaid or refused call's outcome, the chain jobs.
import type { SqlTx } from '../db/sql.js';
import { groupBudgetOfDelegationIn } from '../organizations/spending.js';
import { feeReservationId, releaseReservationIn } from '../settlement/chain/reservations.js';
import { type Charge, delegationAccount, releaseIn } from '../spend/index.js';
import { resolveFeeIn } from './payment-store.js';

/**
 * Releases a reserved fee leg inside the caller's transaction: fee_status to `released` (once: false if it was no
 * longer reserved) and its cap share given back. The one release of a fee leg, for the paid call's
 * outcome (steps/record.ts) and for the sweep of legs nobody resolved (admin/jobs/fee-sweep.ts).
 */
export async function releaseFeeLegIn(
  tx: SqlTx,
  leg: { paymentId: string; delegationId: string; userId: string; feeCents: bigint; description: string },
  now: Date,
): Promise<boolean> {
  if (!(await resolveFeeIn(tx, leg.paymentId, 'released', now))) return false;
  // The rpc backend reserved the leg against the buyer's on-chain funds: they are free again (no-op on the ledger).
  await releaseReservationIn(tx, feeReservationId(leg.paymentId), now);
  await giveBackCapIn(tx, { ...leg, cents: leg.feeCents }, now);
  return true;
}

/**
 * Gives `cents` of a payment's cap charge back to its delegation, inside the caller's transaction. A payment from an
 * organization wallet charged its group's budget with the cap too: the budget gets them back as well (only within
 * the period the charge fell in). The caller makes it happen once (a status it moved).
 */
export async function giveBackCapIn(
  tx: SqlTx,
  back: { paymentId: string; delegationId: string; userId: string; cents: bigint; description: string },
  now: Date,
): Promise<void> {
  if (back.cents <= 0n) return;
  const budget = await groupBudgetOfDelegationIn(tx, back.delegationId);
  const charges: Charge[] = [{ account: delegationAccount(back.delegationId, back.userId), amountCents: back.cents }];
  if (budget !== undefined) charges.push({ account: budget, amountCents: back.cents });
  await releaseIn(tx, { charges, reference: back.paymentId, description: back.description }, now);
}
