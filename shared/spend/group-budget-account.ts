// An organization's group budget as a capped account: `amount_spent_cents` of the current period against
// `spending_limit_cents`, journalled in `group_budget_transaction` (each row with the period it fell in).
//
// Periods. A `month` budget's period runs from the first instant of a UTC calendar month to the first instant of
// the next, a `year` budget's likewise; a `one_shot` budget has one period that never ends (period_end null). No
// job rolls periods: the charge's ONE conditional UPDATE does it. When `now >= period_end` the row still holds an
// ended period, so the charge starts the period containing `now` (computed here and bound, not derived from the old
// bounds: a spend months after period_end lands in the period of `now`, not in the one after the old) with the
// charge as its whole spend. Every SET expression reads the row as it was before the UPDATE (the standard's
// searched UPDATE, which PostgreSQL and SQLite both follow), so each CASE tests the old period_end.
//
// Dates are bound as the drivers take them (shared/db/sql.ts): epoch milliseconds on SQLite, where MikroORM stores
// datetime columns as epoch ms, and Date (timestamptz) on PostgreSQL, where a parameter inside a CASE of two
// parameters would otherwise resolve as text, hence the casts there.
import type { BudgetInterval } from '../db/entities/index.js';
import { type Dialect, type SqlTx, int64, timestamp } from '../db/sql.js';
import { uuidv7 } from '../ids.js';
import { exhaustionRecordedSince, recordActivity } from '../org-activity/store.js';
import type { AccountKind, GroupBudgetAccount, RefusalCause } from './accounts.js';

/** A budget's period: [start, end), end null for a one_shot budget (it never ends). */
export interface BudgetPeriod {
  readonly start: Date;
  readonly end: Date | null;
}

/** The first instant (UTC) of `month` (0-11, may overflow into the next year) of `year`. */
function firstInstant(year: number, month: number): Date {
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  d.setUTCFullYear(year, month, 1);
  return d;
}

/** The UTC calendar month or year containing `now`. */
export function calendarPeriod(interval: 'month' | 'year', now: Date): { start: Date; end: Date } {
  const year = now.getUTCFullYear();
  if (interval === 'year') return { start: firstInstant(year, 0), end: firstInstant(year + 1, 0) };
  const month = now.getUTCMonth();
  return { start: firstInstant(year, month), end: firstInstant(year, month + 1) };
}

/** The first period of a budget created at `now`: its calendar period, or (one_shot) from now, never ending. */
export function firstPeriod(interval: BudgetInterval, now: Date): BudgetPeriod {
  return interval === 'one_shot' ? { start: now, end: null } : calendarPeriod(interval, now);
}

/** The stored columns the current period is derived from. */
export interface StoredPeriod {
  readonly interval: BudgetInterval;
  readonly periodStart: Date;
  readonly periodEnd: Date | null | undefined;
  readonly amountSpentCents: bigint;
}

/**
 * The period a reader sees at `now`, and what was spent in it: the stored period while it runs; once it ended (no
 * charge has rolled it yet), the period containing `now` with nothing spent, exactly what the next charge's UPDATE
 * would start from.
 */
export function currentPeriod(b: StoredPeriod, now: Date): BudgetPeriod & { spentCents: bigint } {
  const end = b.periodEnd ?? null;
  if (end === null || now.getTime() < end.getTime() || b.interval === 'one_shot')
    return { start: b.periodStart, end, spentCents: b.amountSpentCents };
  return { ...calendarPeriod(b.interval, now), spentCents: 0n };
}

const ts = (d: Dialect) => (d === 'postgresql' ? 'cast(? as timestamptz)' : '?');
const int = (d: Dialect) => (d === 'postgresql' ? 'cast(? as bigint)' : '?');

/**
 * The charge. Params: now, x, x, now, yearStart, monthStart, now, yearEnd, monthEnd, id, orgId, now, x, x. The
 * amount the period would hold after the charge is written twice, once to store and once to decide; a one_shot
 * row's period_end is null, so `now >= period_end` is null and it never rolls.
 */
const chargeSql = (d: Dialect) => `update group_budget set
  amount_spent_cents = case when ${ts(d)} >= period_end then ${int(d)} else amount_spent_cents + ${int(d)} end,
  period_start = case when ${ts(d)} >= period_end
    then (case when "interval" = 'year' then ${ts(d)} else ${ts(d)} end) else period_start end,
  period_end = case when ${ts(d)} >= period_end
    then (case when "interval" = 'year' then ${ts(d)} else ${ts(d)} end) else period_end end
  where id = ? and org_id = ?
    and (case when ${ts(d)} >= period_end then ${int(d)} else amount_spent_cents + ${int(d)} end) <= spending_limit_cents`;
const CHARGE: Record<Dialect, string> = { sqlite: chargeSql('sqlite'), postgresql: chargeSql('postgresql') };

/**
 * A release gives back only into the period its charge was counted in: the period_start journalled with the
 * latest reserve of this budget under the release's reference must still be the row's. After a roll (or an
 * interval change, which restarts the period) the charge's period is closed and the new period never paid for it,
 * so nothing is given back. Without a reference no charge can be named, and nothing is given back either.
 */
const GIVE_BACK = `update group_budget set amount_spent_cents = amount_spent_cents - ?
  where id = ? and org_id = ? and amount_spent_cents >= ?
    and period_start = (select t.period_start from group_budget_transaction t
      where t.budget_id = ? and t.kind = 'reserve' and t.reference = ? order by t.created_at desc, t.id desc limit 1)`;

/** The journal row carries the period the row holds right after the charge or release: the one it fell in. */
const JOURNAL = `insert into group_budget_transaction
  (id, budget_id, kind, amount_cents, period_start, reference, description, created_at)
  values (?, ?, ?, ?, (select period_start from group_budget where id = ?), ?, ?, ?)`;

/** What is left for a charge at `now`: the whole limit once the stored period has ended. */
const WHY = `select spending_limit_cents - (case when ? >= period_end then 0 else amount_spent_cents end) as remaining
  from group_budget where id = ? and org_id = ?`;

/** The row right after a charge, read under the lock the charge's UPDATE holds until commit. */
const STATE = `select group_id, currency, period_start, amount_spent_cents, spending_limit_cents, alert_threshold_pct,
    alerted_period_start
  from group_budget where id = ? and org_id = ?`;

/**
 * Claims the period's threshold alert: of any number of spends crossing it, the one whose UPDATE moves
 * alerted_period_start to this period records it, every other matches no row.
 */
const CLAIM_ALERT = `update group_budget set alerted_period_start = period_start
  where id = ? and (alerted_period_start is null or alerted_period_start <> period_start)`;

const recordAlert = (
  tx: SqlTx,
  a: GroupBudgetAccount,
  eventType: 'budget.threshold_crossed' | 'budget.exhausted',
  details: Record<string, string | number | null>,
  now: Date,
) =>
  recordActivity(
    tx,
    { orgId: a.orgId, eventType, actorUserId: null, subjectType: 'budget', subjectId: a.id, details },
    now,
  );

export const groupBudgetKind: AccountKind<GroupBudgetAccount> = {
  // Charged before any delegation (rank 1): every spend naming both locks the budget row first, then the
  // delegation's, so two spends can never each hold the row the other waits for.
  lockRank: 0,
  async charge(tx, a, cents, now) {
    const month = calendarPeriod('month', now);
    const year = calendarPeriod('year', now);
    const params = [now, cents, cents, now, year.start, month.start, now, year.end, month.end, a.id, a.orgId];
    return (await tx.run(CHARGE[tx.dialect], [...params, now, cents, cents])) === 1;
  },
  async giveBack(tx, a, cents, reference) {
    if (reference === null) return false;
    return (await tx.run(GIVE_BACK, [cents, a.id, a.orgId, cents, a.id, reference])) === 1;
  },
  async journal(tx, a, e, now) {
    const id = uuidv7();
    await tx.run(JOURNAL, [id, a.id, e.kind, e.amountCents, a.id, e.reference, e.description, now]);
    return id;
  },
  async whyRefused(tx, a, _cents, now): Promise<RefusalCause> {
    const [row] = await tx.all(WHY, [now, a.id, a.orgId]);
    if (row === undefined) return { reason: 'not_found' };
    const remaining = int64(row.remaining);
    return { reason: 'over_cap', remainingCents: remaining > 0n ? remaining : 0n };
  },
  async afterCharge(tx, a, now) {
    const [row] = await tx.all(STATE, [a.id, a.orgId]);
    if (row === undefined) return;
    const periodStart = timestamp(row.period_start);
    const spent = int64(row.amount_spent_cents);
    const limit = int64(row.spending_limit_cents);
    const common = {
      groupId: String(row.group_id),
      currency: String(row.currency),
      periodStart: periodStart.toISOString(),
      amountSpentCents: spent.toString(),
      spendingLimitCents: limit.toString(),
    };
    // Compared in bigint (spent / limit >= pct / 100, multiplied out): no float, no rounding at the boundary.
    const pct = row.alert_threshold_pct === null ? null : int64(row.alert_threshold_pct);
    const alerted = row.alerted_period_start === null ? null : timestamp(row.alerted_period_start);
    if (pct !== null && spent * 100n >= limit * pct && alerted?.getTime() !== periodStart.getTime()) {
      if ((await tx.run(CLAIM_ALERT, [a.id])) === 1)
        await recordAlert(tx, a, 'budget.threshold_crossed', { ...common, alertThresholdPct: Number(pct) }, now);
    }
    // Reaching the limit: once per period. Counting the period's exhaustion rows is exact because every writer of
    // this budget (a charge, a release, an update) holds its row lock until commit, and each statement of a
    // PostgreSQL READ COMMITTED transaction sees what committed before it began (PostgreSQL manual, "Transaction
    // Isolation", 13.2.1 Read Committed Isolation Level); SQLite runs one writer at a time.
    if (spent < limit) return;
    if (!(await exhaustionRecordedSince(tx, a.orgId, a.id, periodStart)))
      await recordAlert(tx, a, 'budget.exhausted', common, now);
  },
};
