// Group budgets: one cap per (group, currency), created and changed by the organization's Admins, read by them and
// by the members of the group. What a budget has spent is changed only by the spend module (the charge's ONE
// conditional UPDATE, shared/spend/group-budget-account.ts) and by an interval change here, which restarts the
// period: one conditional UPDATE plus a `restart` journal row writing off what the period had spent.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { emSql, isUniqueViolation } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { recordActivity } from '../org-activity/store.js';
import { toWire } from '../money.js';
import { calendarPeriod, currentPeriod, firstPeriod } from '../spend/index.js';
import { budgetView, type BudgetView } from './budget-view.js';
import type { CreateBudgetInput, UpdateBudgetInput } from './requests.js';
import { type OrgCaller, groupIn, isUuid } from './org-caller.js';
import { InvariantError } from '../errors/invariant.js';
import {
  type BudgetRow,
  budgetIdInCurrency,
  budgetOfGroup,
  budgetsOfGroup,
  insertBudget,
  journalRestart,
  lockBudget,
  restartPeriod,
  setLimits,
} from './store/group-budgets.js';
import { isInGroup } from './store/groups.js';

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
  if (!(await isInGroup(em, { groupId: group.id, membershipId: org.membershipId })))
    throw new AppError('BCK.ORG.0003', { details: `group ${groupId} not found` });
  return group;
}

/** The budget of this organization's group; any other id (another group's, another organization's) is 404. */
async function budgetOf(ctx: ServiceContext, org: OrgCaller, groupId: string, budgetId: string): Promise<BudgetRow> {
  const b = isUuid(budgetId) ? await budgetOfGroup(emSql(ctx.db.em()), org.orgId, groupId, budgetId) : undefined;
  if (b === undefined) throw budgetNotFound(budgetId);
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
  const existing = await budgetIdInCurrency(emSql(em), group.id, input.currency);
  if (existing !== undefined) throw conflict(existing);
  const now = ctx.now();
  const period = firstPeriod(input.interval, now);
  const created: BudgetRow = {
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
  try {
    // One transaction: the budget and its activity row commit together.
    await em.transactional(async (tx) => {
      const sql = emSql(tx);
      await insertBudget(sql, created);
      await recordActivity(
        sql,
        {
          orgId: org.orgId,
          eventType: 'budget.created',
          actorUserId: org.userId,
          subjectType: 'budget',
          subjectId: created.id,
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
    });
  } catch (err) {
    // Two creations raced past the read above: the unique (group_id, currency) key refused the second.
    if (isUniqueViolation(err)) throw conflict();
    throw err;
  }
  return budgetView(created, now);
}

/** The group's budgets, one per currency, in currency order (the caller from `memberOf`). */
export async function listBudgets(ctx: ServiceContext, org: OrgCaller, groupId: string): Promise<BudgetView[]> {
  const group = await readableGroup(ctx, org, groupId);
  const now = ctx.now();
  const rows = await budgetsOfGroup(emSql(ctx.db.em()), org.orgId, group.id);
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
  const budget = { id: budgetId, orgId: org.orgId };
  await ctx.db.sql.transaction(async (tx) => {
    const old = await lockBudget(tx, org.orgId, group.id, budgetId);
    if (old === undefined) throw budgetNotFound(budgetId);
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
      const n = await restartPeriod(tx, budget, old, { limit, pct, interval, end }, now);
      if (n !== 1) throw new InvariantError(`budget ${budgetId} changed under its row lock`);
      const description = `interval ${old.interval} -> ${interval}`;
      await journalRestart(
        tx,
        budgetId,
        { amountCents: -closing.spentCents, periodStart: closing.start, description },
        now,
      );
      changes.oldInterval = old.interval;
      changes.newInterval = interval;
      changes.writtenOffCents = toWire(closing.spentCents);
      changes.periodStart = now.toISOString();
    } else if (Object.keys(changes).length > 0) {
      const alerted = pct !== old.alertThresholdPct ? null : old.alertedPeriodStart;
      const n = await setLimits(tx, budget, { limit, pct, alertedPeriodStart: alerted }, now);
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
