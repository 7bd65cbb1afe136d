// A group budget as its readers see it (the wire shape of every budget endpoint).
import type { BudgetInterval } from '../db/entities/index.js';
import { toWire } from '../money.js';
import { type StoredPeriod, currentPeriod } from '../spend/index.js';

/** What a view is made of: a stored budget (store/group-budgets.ts). */
export interface Budget extends StoredPeriod {
  readonly id: string;
  readonly groupId: string;
  readonly currency: string;
  readonly spendingLimitCents: bigint;
  readonly alertThresholdPct?: number | null | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface BudgetView {
  readonly budgetId: string;
  readonly groupId: string;
  readonly currency: string;
  readonly interval: BudgetInterval;
  readonly spendingLimitCents: string;
  readonly amountSpentCents: string;
  readonly remainingBudgetCents: string;
  readonly percentUsed: number;
  readonly periodStart: string;
  readonly periodEnd: string | null;
  readonly alertThresholdPct: number | null;
  readonly status: 'Active' | 'Exhausted';
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * spent / limit in percent, rounded DOWN to hundredths in bigint: only the last step (hundredths / 100) is a float,
 * and a budget short of its limit by any amount never reads 100. Above 100 when a lowered limit is below what the
 * period had spent already.
 */
export function percentUsed(spent: bigint, limit: bigint): number {
  if (limit <= 0n) return spent > 0n ? 100 : 0;
  return Number((spent * 10_000n) / limit) / 100;
}

/** The budget as a reader sees it at `now`: an ended period reads as the period containing now, nothing spent. */
export function budgetView(b: Budget, now: Date): BudgetView {
  const period = currentPeriod(b, now);
  const spent = period.spentCents;
  const left = b.spendingLimitCents - spent;
  return {
    budgetId: b.id,
    groupId: b.groupId,
    currency: b.currency,
    interval: b.interval,
    spendingLimitCents: toWire(b.spendingLimitCents),
    amountSpentCents: toWire(spent),
    remainingBudgetCents: toWire(left > 0n ? left : 0n),
    percentUsed: percentUsed(spent, b.spendingLimitCents),
    periodStart: period.start.toISOString(),
    periodEnd: period.end === null ? null : period.end.toISOString(),
    alertThresholdPct: b.alertThresholdPct ?? null,
    status: spent >= b.spendingLimitCents ? 'Exhausted' : 'Active',
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}
