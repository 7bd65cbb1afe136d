// What a connector's grant may still spend: its delegation's cap, what is spent of it and until when, and, when the
// delegation pays from an organization wallet, the group budget it is also charged to. Read from the database at
// the moment of asking (never a process's cache), so two proxies answer alike.
import type { CommerceCaller } from '../auth/caller.js';
import type { ServiceContext } from '../context.js';
import { emSql } from '../db/sql.js';
import { findOwnDelegation } from '../delegations/store.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { type BudgetView, budgetView } from '../organizations/budget-view.js';
import { budgetOfDelegation, budgetOfGroup } from '../organizations/store/group-budgets.js';

export interface Spending {
  readonly consentType: 'commerce';
  readonly currency: string;
  readonly capCents: string;
  readonly spentCents: string;
  readonly remainingCents: string;
  readonly expiresAt: string;
  readonly organizationBudget?: BudgetView;
}

export async function grantSpending(ctx: ServiceContext, caller: CommerceCaller): Promise<Spending> {
  const em = ctx.db.em();
  const d = await findOwnDelegation(em, caller.userId, caller.delegationId);
  // The token was checked a moment ago; a grant whose delegation is gone is a revoked one.
  if (d === null) throw new AppError('BCK.AUTH.0001', { details: 'the grant of this access token was revoked' });
  const remaining = d.spendingLimitCents > d.amountSpentCents ? d.spendingLimitCents - d.amountSpentCents : 0n;
  const spending: Spending = {
    consentType: 'commerce',
    currency: d.currency,
    capCents: toWire(d.spendingLimitCents),
    spentCents: toWire(d.amountSpentCents),
    remainingCents: toWire(remaining),
    expiresAt: d.expiresAt.toISOString(),
  };
  if (d.orgWalletId == null || d.groupId == null) return spending;
  const tx = emSql(em);
  const ref = await budgetOfDelegation(tx, d.id);
  const budget = ref === undefined ? undefined : await budgetOfGroup(tx, ref.orgId, d.groupId, ref.budgetId);
  return budget === undefined ? spending : { ...spending, organizationBudget: budgetView(budget, ctx.now()) };
}
