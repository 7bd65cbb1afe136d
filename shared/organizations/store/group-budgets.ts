// Every statement on `group_budget` and `group_budget_transaction` outside the charge, in SQL on the caller's `SqlTx`,
// the style of the spend module's charge and release (shared/spend/group-budget-account.ts), which holds the other
// statements on these tables. Callers hand in a transaction's `SqlTx` (`ctx.db.sql`, or `emSql` of an entity
// manager's transaction) or `emSql` of a fresh entity manager for a read.
//
// Values are read as shared/db/sql.ts reads them: 64-bit amounts selected `cast(... as text)` (an entity manager's
// connection hands SQLite integers back as JavaScript numbers) and read with `int64`, datetimes with `timestamp`
// (epoch milliseconds on SQLite, where MikroORM stores them so; timestamptz on PostgreSQL). Dates are bound as
// `SqlTx` binds them.
import { z } from 'zod';
import { BUDGET_INTERVALS, type BudgetInterval } from '../../db/entities/index.js';
import { type SqlRow, type SqlTx, int64, timestamp } from '../../db/sql.js';
import { uuidv7 } from '../../ids.js';

/** A group budget row. */
export interface BudgetRow {
  readonly id: string;
  readonly orgId: string;
  readonly groupId: string;
  readonly currency: string;
  readonly interval: BudgetInterval;
  readonly spendingLimitCents: bigint;
  readonly amountSpentCents: bigint;
  readonly periodStart: Date;
  readonly periodEnd: Date | null;
  readonly alertThresholdPct: number | null;
  /** The start of the period whose threshold alert was recorded. */
  readonly alertedPeriodStart: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A stored interval, checked as it is read (the column is plain text). */
const Interval = z.enum(BUDGET_INTERVALS);

const dateOrNull = (v: unknown): Date | null => (v === null ? null : timestamp(v));

const COLUMNS = `id, org_id, group_id, currency, "interval", cast(spending_limit_cents as text) as spending_limit_cents,
    cast(amount_spent_cents as text) as amount_spent_cents, period_start, period_end, alert_threshold_pct,
    alerted_period_start, created_at, updated_at`;

const budgetRow = (r: SqlRow): BudgetRow => ({
  id: String(r.id),
  orgId: String(r.org_id),
  groupId: String(r.group_id),
  currency: String(r.currency),
  interval: Interval.parse(r.interval),
  spendingLimitCents: int64(r.spending_limit_cents),
  amountSpentCents: int64(r.amount_spent_cents),
  periodStart: timestamp(r.period_start),
  periodEnd: dateOrNull(r.period_end),
  alertThresholdPct: r.alert_threshold_pct === null ? null : Number(int64(r.alert_threshold_pct)),
  alertedPeriodStart: dateOrNull(r.alerted_period_start),
  createdAt: timestamp(r.created_at),
  updatedAt: timestamp(r.updated_at),
});

/** The id of the group's budget in `currency`, if it has one. */
export async function budgetIdInCurrency(tx: SqlTx, groupId: string, currency: string): Promise<string | undefined> {
  const [row] = await tx.all('select id from group_budget where group_id = ? and currency = ? limit 1', [
    groupId,
    currency,
  ]);
  return row === undefined ? undefined : String(row.id);
}

/** Inserts a budget; a second budget of the group in the same currency is a unique violation. */
export async function insertBudget(tx: SqlTx, b: BudgetRow): Promise<void> {
  await tx.run(
    `insert into group_budget (id, org_id, group_id, currency, "interval", spending_limit_cents, amount_spent_cents,
        period_start, period_end, alert_threshold_pct, alerted_period_start, created_at, updated_at)
      values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      b.id,
      b.orgId,
      b.groupId,
      b.currency,
      b.interval,
      b.spendingLimitCents,
      b.amountSpentCents,
      b.periodStart,
      b.periodEnd,
      b.alertThresholdPct,
      b.alertedPeriodStart,
      b.createdAt,
      b.updatedAt,
    ],
  );
}

/** The budget `budgetId` of the organization's group, if it is one. */
export async function budgetOfGroup(
  tx: SqlTx,
  orgId: string,
  groupId: string,
  budgetId: string,
): Promise<BudgetRow | undefined> {
  const [row] = await tx.all(`select ${COLUMNS} from group_budget where id = ? and group_id = ? and org_id = ?`, [
    budgetId,
    groupId,
    orgId,
  ]);
  return row === undefined ? undefined : budgetRow(row);
}

/** The group's budgets, one per currency, in currency order. */
export async function budgetsOfGroup(tx: SqlTx, orgId: string, groupId: string): Promise<BudgetRow[]> {
  const rows = await tx.all(
    `select ${COLUMNS} from group_budget where group_id = ? and org_id = ? order by currency asc`,
    [groupId, orgId],
  );
  return rows.map(budgetRow);
}

/** What an update starts from (and records as the old values). */
export type LockedBudget = Pick<
  BudgetRow,
  | 'interval'
  | 'spendingLimitCents'
  | 'amountSpentCents'
  | 'periodStart'
  | 'periodEnd'
  | 'alertThresholdPct'
  | 'alertedPeriodStart'
>;

// On PostgreSQL the read takes the row lock a charge takes, so the values the update starts from (and records as
// the old ones) stay true until commit; SQLite's transaction (BEGIN IMMEDIATE) already excludes every other writer.
const READ = `select "interval", spending_limit_cents, amount_spent_cents, period_start, period_end,
    alert_threshold_pct, alerted_period_start
  from group_budget where id = ? and group_id = ? and org_id = ?`;
const READ_LOCKED = { sqlite: READ, postgresql: `${READ} for update` } as const;

/** The budget's row, locked until `tx` ends (a transaction of `ctx.db.sql`); undefined when there is none. */
export async function lockBudget(
  tx: SqlTx,
  orgId: string,
  groupId: string,
  budgetId: string,
): Promise<LockedBudget | undefined> {
  const [row] = await tx.all(READ_LOCKED[tx.dialect], [budgetId, groupId, orgId]);
  if (row === undefined) return undefined;
  return {
    interval: Interval.parse(row.interval),
    spendingLimitCents: int64(row.spending_limit_cents),
    amountSpentCents: int64(row.amount_spent_cents),
    periodStart: timestamp(row.period_start),
    periodEnd: dateOrNull(row.period_end),
    alertThresholdPct: row.alert_threshold_pct === null ? null : Number(int64(row.alert_threshold_pct)),
    alertedPeriodStart: dateOrNull(row.alerted_period_start),
  };
}

/** A change of limit or threshold: the spent amount and the period are not touched. */
const SET_LIMITS = `update group_budget set spending_limit_cents = ?, alert_threshold_pct = ?, alerted_period_start = ?,
    updated_at = ?
  where id = ? and org_id = ?`;

/** Sets the limit, the threshold and its alert state; the number of rows changed. */
export function setLimits(
  tx: SqlTx,
  b: { id: string; orgId: string },
  set: { limit: bigint; pct: number | null; alertedPeriodStart: Date | null },
  now: Date,
): Promise<number> {
  return tx.run(SET_LIMITS, [set.limit, set.pct, set.alertedPeriodStart, now, b.id, b.orgId]);
}

/**
 * An interval change: the new period and what it has spent (nothing). Conditional on the period and the amount the
 * restart journal row writes off, so the row and the journal cannot disagree.
 */
const RESTART = `update group_budget set spending_limit_cents = ?, alert_threshold_pct = ?, alerted_period_start = null,
    "interval" = ?, amount_spent_cents = 0, period_start = ?, period_end = ?, updated_at = ?
  where id = ? and org_id = ? and amount_spent_cents = ? and period_start = ?`;

/**
 * Starts a new period at `now` (ending at `end`) with the new limit, threshold and interval, if the row still holds
 * the period and amount of `old`; the number of rows changed.
 */
export function restartPeriod(
  tx: SqlTx,
  b: { id: string; orgId: string },
  old: Pick<LockedBudget, 'amountSpentCents' | 'periodStart'>,
  set: { limit: bigint; pct: number | null; interval: BudgetInterval; end: Date | null },
  now: Date,
): Promise<number> {
  return tx.run(RESTART, [
    set.limit,
    set.pct,
    set.interval,
    now,
    set.end,
    now,
    b.id,
    b.orgId,
    old.amountSpentCents,
    old.periodStart,
  ]);
}

const JOURNAL_RESTART = `insert into group_budget_transaction
  (id, budget_id, kind, amount_cents, period_start, reference, description, created_at)
  values (?, ?, 'restart', ?, ?, null, ?, ?)`;

/** Journals a restart: `amountCents` (negative) written off the period that began at `periodStart`. */
export async function journalRestart(
  tx: SqlTx,
  budgetId: string,
  e: { amountCents: bigint; periodStart: Date; description: string },
  now: Date,
): Promise<void> {
  await tx.run(JOURNAL_RESTART, [uuidv7(), budgetId, e.amountCents, e.periodStart, e.description, now]);
}

/**
 * The budget a delegation's spends are charged to (its group's, in its currency), read on the spend's transaction;
 * undefined for a delegation that pays from its user's own wallet.
 */
export async function budgetOfDelegation(
  tx: SqlTx,
  delegationId: string,
): Promise<{ budgetId: string; orgId: string } | undefined> {
  const [row] = await tx.all(
    `select b.id as budget_id, b.org_id as org_id from delegation d
      join group_budget b on b.group_id = d.group_id and b.currency = d.currency
      where d.id = ? and d.org_wallet_id is not null`,
    [delegationId],
  );
  return row === undefined ? undefined : { budgetId: String(row.budget_id), orgId: String(row.org_id) };
}
