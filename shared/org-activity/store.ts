// Every statement on org_activity, the organization's append-only activity log: who did what (members, groups,
// shares, budget changes) and what the service noticed (a budget crossing its alert threshold, a budget exhausted).
// One style, SQL on the caller's transaction, because the spend writes its alerts inside its own SQL transaction
// (shared/spend/group-budget-account.ts); the organization services reach it through `emSql` on theirs. It sits
// below both the spend and the organizations, so each imports it without running upward.
//
// Dates are bound as shared/db/sql.ts binds them (epoch milliseconds on SQLite, as MikroORM stores them there);
// details are JSON text (a json column on SQLite, jsonb on PostgreSQL, which hands it back parsed).
import type { ActivityEvent } from '../db/entities/index.js';
import { type SqlTx, type SqlValue, int64, timestamp } from '../db/sql.js';
import { uuidv7 } from '../ids.js';

export type ActivityDetails = Readonly<Record<string, string | number | boolean | null>>;

export interface ActivityEntry {
  readonly orgId: string;
  readonly eventType: ActivityEvent;
  /** null when the service itself noticed it (an alert). */
  readonly actorUserId: string | null;
  readonly subjectType: 'organization' | 'member' | 'group' | 'wallet' | 'payment_method' | 'budget';
  readonly subjectId: string;
  readonly details?: ActivityDetails;
}

const APPEND = `insert into org_activity
  (id, org_id, event_type, actor_user_id, subject_type, subject_id, details, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?)`;

/** Appends one entry on the caller's transaction `tx`, so the log has it exactly when the change committed. */
export async function recordActivity(tx: SqlTx, e: ActivityEntry, now: Date): Promise<void> {
  await tx.run(APPEND, [
    uuidv7(),
    e.orgId,
    e.eventType,
    e.actorUserId,
    e.subjectType,
    e.subjectId,
    JSON.stringify(e.details ?? {}),
    now,
  ]);
}

/**
 * Whether the period's exhaustion was recorded already: no column marks it, the period's activity rows do. Read
 * only when a charge reached the limit (the index on (org_id, created_at) bounds it to the period's rows).
 */
const EXHAUSTED_BEFORE = `select count(*) as n from org_activity
  where org_id = ? and created_at >= ? and subject_id = ? and event_type = 'budget.exhausted'`;

/** Whether `budget.exhausted` was recorded for the budget since `periodStart`, read on the caller's transaction. */
export async function exhaustionRecordedSince(
  tx: SqlTx,
  orgId: string,
  budgetId: string,
  periodStart: Date,
): Promise<boolean> {
  const [seen] = await tx.all(EXHAUSTED_BEFORE, [orgId, periodStart, budgetId]);
  return seen === undefined || int64(seen.n) !== 0n;
}

export interface ActivityFilter {
  readonly orgId: string;
  readonly eventType?: string | undefined;
  readonly actorUserId?: string | undefined;
  /** Inclusive. */
  readonly from?: Date | undefined;
  /** Exclusive. */
  readonly to?: Date | undefined;
}

export interface ActivityRow {
  readonly id: string;
  readonly eventType: string;
  readonly actorUserId: string | null;
  readonly subjectType: string;
  readonly subjectId: string;
  readonly details: Record<string, string | number | boolean | null>;
  readonly createdAt: Date;
}

/** The filter as a WHERE clause of fixed parts (only the conditions asked for), and its parameters in order. */
function whereOf(f: ActivityFilter): { sql: string; params: SqlValue[] } {
  const parts = ['org_id = ?'];
  const params: SqlValue[] = [f.orgId];
  const add = (sql: string, v: SqlValue | undefined) => {
    if (v === undefined) return;
    parts.push(sql);
    params.push(v);
  };
  add('event_type = ?', f.eventType);
  add('actor_user_id = ?', f.actorUserId);
  add('created_at >= ?', f.from);
  add('created_at < ?', f.to);
  return { sql: parts.join(' and '), params };
}

/** SQLite hands the json column back as text, PostgreSQL's jsonb arrives parsed. */
function details(v: unknown): ActivityRow['details'] {
  const parsed: unknown = typeof v === 'string' ? JSON.parse(v) : v;
  return (parsed ?? {}) as ActivityRow['details'];
}

/** One page of the filtered log, newest first, and how many entries the filter matches in all. */
export async function activityPage(
  tx: SqlTx,
  f: ActivityFilter,
  page: { readonly limit: number; readonly offset: number },
): Promise<{ rows: ActivityRow[]; total: number }> {
  const where = whereOf(f);
  // The id breaks ties between entries of one millisecond, so pages neither repeat nor skip an entry.
  const rows = await tx.all(
    `select id, event_type, actor_user_id, subject_type, subject_id, details, created_at from org_activity
      where ${where.sql} order by created_at desc, id desc limit ? offset ?`,
    [...where.params, page.limit, page.offset],
  );
  const [count] = await tx.all(`select count(*) as n from org_activity where ${where.sql}`, where.params);
  return {
    rows: rows.map((r) => ({
      id: String(r.id),
      eventType: String(r.event_type),
      actorUserId: r.actor_user_id == null ? null : String(r.actor_user_id),
      subjectType: String(r.subject_type),
      subjectId: String(r.subject_id),
      details: details(r.details),
      createdAt: timestamp(r.created_at),
    })),
    total: count === undefined ? 0 : Number(int64(count.n)),
  };
}
