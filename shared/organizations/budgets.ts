// Group budgets: one cap per (group, currency), created and changed by the organization's Admins, read by them and
// by the members of the group. What a budget has spent is changed only by the spend module (the charge's ONE
// conditional UPDATE, shared/spend/group-budget-account.ts) and by an interval change here, which restarts the
// period: one conditional UPDATE plus a `restart` journal row writing off what the period had spent.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { BUDGET_INTERVALS, type BudgetInterval, GroupBudget, OrgGroupMember } from '../db/entities/index.js';
import { type SqlTx, emSql, int64, isUniqueViolation, timestamp } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { uuidv7 } from '../ids.js';
import { recordActivity } from '../org-activity/store.js';
import { toWire } from '../money.js';
import { calendarPeriod, currentPeriod, firstPeriod } from '../spend/index.js';
import { type Budget, budgetView, type BudgetView } from './budget-view.js';
import type { CreateBudgetInput, UpdateBudgetInput } from './requests.js';
import { type OrgCaller, groupIn, isUuid } from './org-caller.js';
import { InvariantError } from '../errors/invariant.js';

const budgetNotFound = (budgetId: string): AppError =>
  new AppError('BCK.ORG.0006', { details: `budget ${budgetId} not found`, params: { budgetId } });

/**
 * The group, if the caller may read its budgets: an Admin reads every group, a Member only the groups they are in.
 * Any other group is the 404 of an unknown group, so a Member learns nothing of groups that are not theirs.
 */
async function readableGroup(ctx: ServiceContext, org: OrgCaller, groupId: string) {
  const em = ctx.db.em();
  const group = await groupIn(em, org, groupId);
  if (org.role === 'Admin') return group;
  const inGroup = await em.findOne(OrgGroupMember, { groupId: group.id, membershipId: org.membershipId });
  if (inGroup === null) throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
  return group;
}

/** The budget of this organization's group; any other id (another group's, another organization's) is 404. */
async function budgetOf(ctx: ServiceContext, org: OrgCaller, groupId: string, budgetId: string): Promise<Budget> {
  const b = isUuid(budgetId)
    ? await ctx.db.em().findOne(GroupBudget, { id: budgetId, groupId, orgId: org.orgId })
    : null;
  if (b === null) throw budgetNotFound(budgetId);
  return b;
}

/** What only an Admin may do: the caller resolved by `adminOf` (403 BCK.ORG.0002 for anyone else). */
function mustManage(org: OrgCaller): void {
  if (org.role !== 'Admin')
    throw new AppError('BCK.ORG.0002', { details: 'only an Admin of the organization may do this' });
}

/** Creates a group's budget in one currency (the caller from `adminOf`: access is decided before the body is read). */
export async function createBudget(
  ctx: ServiceContext,
  org: OrgCaller,
  groupId: string,
  input: CreateBudgetInput,
): Promise<BudgetView> {
  mustManage(org);
  const em = ctx.db.em();
  const group = await groupIn(em, org, groupId);
  // A deleted (deactivated) group keeps its budgets for the record but takes no new one.
  if (!group.active) throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
  const conflict = (existing?: string) =>
    new AppError('BCK.ORG.0008', {
      details: `group ${group.id} already has a budget in ${input.currency}`,
      params: existing === undefined ? {} : { budgetId: existing },
    });
  const existing = await em.findOne(GroupBudget, { groupId: group.id, currency: input.currency });
  if (existing !== null) throw conflict(existing.id);
  const now = ctx.now();
  const period = firstPeriod(input.interval, now);
  const created = {
    id: randomUUID(),
    orgId: org.orgId,
    groupId: group.id,
    currency: input.currency,
    interval: input.interval,
    spendingLimitCents: input.spendingLimitCents,
    amountSpentCents: 0n,
    periodStart: period.start,
    periodEnd: period.end,
    alertThresholdPct: input.alertThresholdPct ?? null,
    alertedPeriodStart: null,
    createdAt: now,
    updatedAt: now,
  };
  let budget: Budget;
  try {
    // One transaction: the budget and its activity row commit together.
    budget = await em.transactional(async (tx) => {
      const b = tx.create(GroupBudget, created);
      await tx.flush();
      await recordActivity(
        emSql(tx),
        {
          orgId: org.orgId,
          eventType: 'budget.created',
          actorUserId: org.userId,
          subjectType: 'budget',
          subjectId: b.id,
          details: {
            groupId: group.id,
            currency: input.currency,
            interval: input.interval,
            spendingLimitCents: toWire(input.spendingLimitCents),
            alertThresholdPct: input.alertThresholdPct ?? null,
          },
        },
        now,
      );
      return b;
    });
  } catch (err) {
    // Two creations raced past the read above: the unique (group_id, currency) key refused the second.
    if (isUniqueViolation(err)) throw conflict();
    throw err;
  }
  return budgetView(budget, now);
}

/** The group's budgets, one per currency, in currency order (the caller from `memberOf`). */
export async function listBudgets(ctx: ServiceContext, org: OrgCaller, groupId: string): Promise<BudgetView[]> {
  const group = await readableGroup(ctx, org, groupId);
  const now = ctx.now();
  const rows = await ctx.db
    .em()
    .find(GroupBudget, { groupId: group.id, orgId: org.orgId }, { orderBy: { currency: 'asc' } });
  return rows.map((b) => budgetView(b, now));
}

export async function getBudget(
  ctx: ServiceContext,
  org: OrgCaller,
  groupId: string,
  budgetId: string,
): Promise<BudgetView> {
  const group = await readableGroup(ctx, org, groupId);
  return budgetView(await budgetOf(ctx, org, group.id, budgetId), ctx.now());
}

// On PostgreSQL the read takes the row lock a charge takes, so the values the update starts from (and records as
// the old ones) stay true until commit; SQLite's transaction (BEGIN IMMEDIATE) already excludes every other writer.
const READ = `select "interval", spending_limit_cents, amount_spent_cents, period_start, period_end,
    alert_threshold_pct, alerted_period_start
  from group_budget where id = ? and group_id = ? and org_id = ?`;
const READ_LOCKED = { sqlite: READ, postgresql: `${READ} for update` } as const;

/** A change of limit or threshold: the spent amount and the period are not touched. */
const SET_LIMITS = `update group_budget set spending_limit_cents = ?, alert_threshold_pct = ?, alerted_period_start = ?,
    updated_at = ?
  where id = ? and org_id = ?`;

/**
 * An interval change: the new period and what it has spent (nothing). Conditional on the period and the amount the
 * restart journal row writes off, so the row and the journal cannot disagree.
 */
const RESTART = `update group_budget set spending_limit_cents = ?, alert_threshold_pct = ?, alerted_period_start = null,
    "interval" = ?, amount_spent_cents = 0, period_start = ?, period_end = ?, updated_at = ?
  where id = ? and org_id = ? and amount_spent_cents = ? and period_start = ?`;

const JOURNAL_RESTART = `insert into group_budget_transaction
  (id, budget_id, kind, amount_cents, period_start, reference, description, created_at)
  values (?, ?, 'restart', ?, ?, null, ?, ?)`;

interface Stored {
  readonly interval: BudgetInterval;
  readonly spendingLimitCents: bigint;
  readonly amountSpentCents: bigint;
  readonly periodStart: Date;
  readonly periodEnd: Date | null;
  readonly alertThresholdPct: number | null;
  readonly alertedPeriodStart: Date | null;
}

/** A stored interval, checked as it is read (the column is plain text). */
const Interval = z.enum(BUDGET_INTERVALS);

async function readLocked(tx: SqlTx, org: OrgCaller, groupId: string, budgetId: string): Promise<Stored> {
  const [row] = await tx.all(READ_LOCKED[tx.dialect], [budgetId, groupId, org.orgId]);
  if (row === undefined) throw budgetNotFound(budgetId);
  const interval = Interval.parse(row.interval);
  return {
    interval,
    spendingLimitCents: int64(row.spending_limit_cents),
    amountSpentCents: int64(row.amount_spent_cents),
    periodStart: timestamp(row.period_start),
    periodEnd: row.period_end === null ? null : timestamp(row.period_end),
    alertThresholdPct: row.alert_threshold_pct === null ? null : Number(int64(row.alert_threshold_pct)),
    alertedPeriodStart: row.alerted_period_start === null ? null : timestamp(row.alerted_period_start),
  };
}

/**
 * Changes a budget's limit, alert threshold or interval (Admins). The rules:
 * - a limit below what the current period has spent makes the budget Exhausted until the period ends;
 * - a changed threshold may alert again in the current period (its alert state is cleared);
 * - a changed interval restarts the period at the moment of the change, ending where the new interval's calendar
 *   period containing now ends (a month budget changed to yearly on 14 May runs to 1 January, then whole years;
 *   one_shot never ends), with nothing spent: what the closed period had spent is written off by a `restart`
 *   journal row, and a release of a charge made before the change gives nothing back (its period is closed).
 *   Starting at the moment of the change, not at the calendar start, keeps the new period distinct from the
 *   closed one even when both would begin on the same 1 January.
 * Recorded as one `budget.updated` activity with the old and new value of every field that changed.
 */
export async function updateBudget(
  ctx: ServiceContext,
  org: OrgCaller,
  groupId: string,
  budgetId: string,
  input: UpdateBudgetInput,
): Promise<BudgetView> {
  mustManage(org);
  const group = await groupIn(ctx.db.em(), org, groupId);
  if (!isUuid(budgetId)) throw budgetNotFound(budgetId);
  const now = ctx.now();
  await ctx.db.sql.transaction(async (tx) => {
    const old = await readLocked(tx, org, group.id, budgetId);
    const limit = input.spendingLimitCents ?? old.spendingLimitCents;
    const pct = input.alertThresholdPct !== undefined ? input.alertThresholdPct : old.alertThresholdPct;
    const interval = input.interval ?? old.interval;
    const changes: Record<string, string | number | null> = {};
    if (limit !== old.spendingLimitCents) {
      changes.oldSpendingLimitCents = toWire(old.spendingLimitCents);
      changes.newSpendingLimitCents = toWire(limit);
    }
    if (pct !== old.alertThresholdPct) {
      changes.oldAlertThresholdPct = old.alertThresholdPct;
      changes.newAlertThresholdPct = pct;
    }
    if (interval !== old.interval) {
      // What the period a reader sees now has spent: nothing if the stored period already ended.
      const closing = currentPeriod(old, now);
      const end = interval === 'one_shot' ? null : calendarPeriod(interval, now).end;
      const n = await tx.run(RESTART, [
        limit,
        pct,
        interval,
        now,
        end,
        now,
        budgetId,
        org.orgId,
        old.amountSpentCents,
        old.periodStart,
      ]);
      if (n !== 1) throw new InvariantError(`budget ${budgetId} changed under its row lock`);
      const description = `interval ${old.interval} -> ${interval}`;
      await tx.run(JOURNAL_RESTART, [uuidv7(), budgetId, -closing.spentCents, closing.start, description, now]);
      changes.oldInterval = old.interval;
      changes.newInterval = interval;
      changes.writtenOffCents = toWire(closing.spentCents);
      changes.periodStart = now.toISOString();
    } else if (Object.keys(changes).length > 0) {
      const alerted = pct !== old.alertThresholdPct ? null : old.alertedPeriodStart;
      const n = await tx.run(SET_LIMITS, [limit, pct, alerted, now, budgetId, org.orgId]);
      if (n !== 1) throw new InvariantError(`budget ${budgetId} changed under its row lock`);
    }
    // In the same transaction: the log has the change exactly when it committed. Nothing changed, nothing logged.
    if (Object.keys(changes).length > 0) {
      const entry = { orgId: org.orgId, actorUserId: org.userId, subjectType: 'budget', subjectId: budgetId } as const;
      await recordActivity(
        tx,
        { ...entry, eventType: 'budget.updated', details: { groupId: group.id, ...changes } },
        now,
      );
    }
  });
  return budgetView(await budgetOf(ctx, org, group.id, budgetId), ctx.now());
}
