// Every statement on the delegation tables outside the spend, in hand SQL (shared/db/sql.ts), the style of the
// spend's charge (shared/spend/delegation-account.ts), which alone writes what a delegation has spent
// (amount_spent_cents, transaction_count and the delegation_transaction rows) in the transaction of the charge.
// Here: creating a delegation, reading it, listing it, revoking it (one, or those of revoked OAuth grants), and
// reading its ledger (a page, the last charge). Each function takes the entity manager it runs on: inside
// `em.transactional` its statements join that transaction (emSql), so an OAuth grant and its delegation commit
// together.
//
// Rows are read with the 64-bit columns as text (better-sqlite3 hands BIGINT columns back as JavaScript numbers
// through the entity manager's connection) and datetimes as either driver gives them (epoch milliseconds on
// SQLite, where MikroORM keeps them so; timestamptz on PostgreSQL). allowed_recipients is JSON: text on SQLite,
// jsonb (parsed by pg) on PostgreSQL.
import { z } from 'zod';
import { DELEGATION_STORED_STATUSES, type DelegationStoredStatus } from '../db/entities/index.js';
import { type Em, type SqlRow, type SqlTx, type SqlValue, emSql, int64, timestamp } from '../db/sql.js';
import type { DelegationStatus } from './requests.js';

/** A delegation row. */
export interface DelegationEntity {
  readonly id: string;
  readonly userId: string;
  readonly provider: string;
  readonly status: DelegationStoredStatus;
  readonly currency: string;
  readonly spendingLimitCents: bigint;
  readonly amountSpentCents: bigint;
  readonly transactionCount: number;
  /** Checksummed addresses the router may pay; null = any. */
  readonly allowedRecipients: string[] | null;
  readonly planId: number | null;
  readonly apiKeyId: string | null;
  readonly providerPaymentMethodId: string | null;
  readonly orgWalletId: string | null;
  readonly groupId: string | null;
  readonly expiresAt: Date;
  readonly revokedAt: Date | null;
  readonly createdAt: Date;
}

/** A new delegation's columns: nothing spent yet, never revoked. */
export type NewDelegationRow = Omit<
  DelegationEntity,
  'amountSpentCents' | 'transactionCount' | 'revokedAt' | 'createdAt' | 'status'
> & { readonly status: 'Active'; readonly createdAt: Date };

/** One row of a delegation's ledger. */
export interface DelegationTransactionRow {
  readonly id: string;
  readonly delegationId: string;
  readonly kind: string;
  readonly amountCents: bigint;
  readonly reference: string | null;
  readonly description: string | null;
  readonly createdAt: Date;
}

const COLUMNS = `id, user_id, provider, status, currency, cast(spending_limit_cents as text) as spending_limit_cents,
  cast(amount_spent_cents as text) as amount_spent_cents, transaction_count, allowed_recipients, plan_id, api_key_id,
  provider_payment_method_id, org_wallet_id, group_id, expires_at, revoked_at, created_at`;

const sql = (em: Em): SqlTx => emSql(em);
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const Recipients = z.array(z.string()).nullable();

function status(v: unknown): DelegationStoredStatus {
  const found = DELEGATION_STORED_STATUSES.find((s) => s === v);
  if (found === undefined) throw new TypeError(`delegation holds an unknown status: ${String(v)}`);
  return found;
}

function recipients(v: unknown): string[] | null {
  return Recipients.parse(typeof v === 'string' ? JSON.parse(v) : (v ?? null));
}

function delegationFromRow(r: SqlRow): DelegationEntity {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    provider: String(r.provider),
    status: status(r.status),
    currency: String(r.currency),
    spendingLimitCents: int64(r.spending_limit_cents),
    amountSpentCents: int64(r.amount_spent_cents),
    transactionCount: Number(int64(r.transaction_count)),
    allowedRecipients: recipients(r.allowed_recipients),
    planId: r.plan_id === null || r.plan_id === undefined ? null : Number(int64(r.plan_id)),
    apiKeyId: textOrNull(r.api_key_id),
    providerPaymentMethodId: textOrNull(r.provider_payment_method_id),
    orgWalletId: textOrNull(r.org_wallet_id),
    groupId: textOrNull(r.group_id),
    expiresAt: timestamp(r.expires_at),
    revokedAt: r.revoked_at === null || r.revoked_at === undefined ? null : timestamp(r.revoked_at),
    createdAt: timestamp(r.created_at),
  };
}

/** Inserts a new delegation on `em` (inside its transaction when there is one). */
export async function insertDelegation(em: Em, row: NewDelegationRow): Promise<void> {
  await sql(em).run(
    `insert into delegation (id, user_id, provider, status, currency, spending_limit_cents, amount_spent_cents,
       transaction_count, allowed_recipients, plan_id, api_key_id, provider_payment_method_id, org_wallet_id, group_id,
       expires_at, revoked_at, created_at)
     values (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?, null, ?)`,
    [
      row.id,
      row.userId,
      row.provider,
      row.status,
      row.currency,
      row.spendingLimitCents,
      row.allowedRecipients === null ? null : JSON.stringify(row.allowedRecipients),
      row.planId,
      row.apiKeyId,
      row.providerPaymentMethodId,
      row.orgWalletId,
      row.groupId,
      row.expiresAt,
      row.createdAt,
    ],
  );
}

/** The delegation `delegationId` of `userId`, or null (another user's is null too). */
export async function findOwnDelegation(
  em: Em,
  userId: string,
  delegationId: string,
): Promise<DelegationEntity | null> {
  const [r] = await sql(em).all(`select ${COLUMNS} from delegation where id = ? and user_id = ?`, [
    delegationId,
    userId,
  ]);
  return r === undefined ? null : delegationFromRow(r);
}

/** One page of the user's delegations, newest first, narrowed by `accessible` and `status` as of `now`. */
export async function delegationsPage(
  em: Em,
  caller: { userId: string; apiKeyId: string },
  q: { page: number; offset: number; accessible?: boolean | undefined; status?: DelegationStatus | undefined },
  now: Date,
): Promise<{ rows: DelegationEntity[]; total: number }> {
  // Every filter narrows: `accessible` AND `status` (a switch that assigned into one object let `status` replace
  // the accessible conditions, so accessible=true&status=Revoked listed revoked delegations).
  const terms = ['user_id = ?'];
  const params: SqlValue[] = [caller.userId];
  const active = (): void => {
    terms.push("status = 'Active'", 'expires_at > ?', 'amount_spent_cents < spending_limit_cents');
    params.push(now);
  };
  if (q.accessible === true) {
    active();
    terms.push('(api_key_id is null or api_key_id = ?)');
    params.push(caller.apiKeyId);
  }
  switch (q.status) {
    case 'Active':
      active();
      break;
    case 'Revoked':
      terms.push("status = 'Revoked'");
      break;
    case 'Expired':
      terms.push("status = 'Active'", 'expires_at <= ?');
      params.push(now);
      break;
    case 'Exhausted':
      terms.push("status = 'Active'", 'expires_at > ?', 'amount_spent_cents >= spending_limit_cents');
      params.push(now);
      break;
    default:
  }
  const where = terms.join(' and ');
  const rows = await sql(em).all(
    `select ${COLUMNS} from delegation where ${where} order by created_at desc, id asc limit ${Number(q.offset)} offset ${Number((q.page - 1) * q.offset)}`,
    params,
  );
  const [count] = await sql(em).all(`select count(*) as n from delegation where ${where}`, params);
  return { rows: rows.map(delegationFromRow), total: count === undefined ? 0 : Number(int64(count.n)) };
}

/** Revokes the user's delegation if it is still Active (a revoked one stays as it was). */
export async function revokeActive(em: Em, userId: string, delegationId: string, now: Date): Promise<void> {
  await sql(em).run(
    "update delegation set status = 'Revoked', revoked_at = ? where id = ? and user_id = ? and status = 'Active'",
    [now, delegationId, userId],
  );
}

/** One page of a delegation's ledger, newest first. */
export async function transactionsPage(
  em: Em,
  delegationId: string,
  q: { page: number; offset: number },
): Promise<{ rows: DelegationTransactionRow[]; total: number }> {
  const rows = await sql(em).all(
    `select id, delegation_id, kind, cast(amount_cents as text) as amount_cents, reference, description, created_at
     from delegation_transaction where delegation_id = ?
     order by created_at desc, id desc limit ${Number(q.offset)} offset ${Number((q.page - 1) * q.offset)}`,
    [delegationId],
  );
  const [count] = await sql(em).all('select count(*) as n from delegation_transaction where delegation_id = ?', [
    delegationId,
  ]);
  return {
    rows: rows.map((r) => ({
      id: String(r.id),
      delegationId: String(r.delegation_id),
      kind: String(r.kind),
      amountCents: int64(r.amount_cents),
      reference: textOrNull(r.reference),
      description: textOrNull(r.description),
      createdAt: timestamp(r.created_at),
    })),
    total: count === undefined ? 0 : Number(int64(count.n)),
  };
}

/** `?, ?, ...` for `n` values of an `in (...)` list. */
const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** The delegations named that are `userId`'s (another user's is left out), whatever their state. */
export async function delegationsOfUser(
  em: Em,
  userId: string,
  delegationIds: readonly string[],
): Promise<DelegationEntity[]> {
  if (delegationIds.length === 0) return [];
  const rows = await sql(em).all(
    `select ${COLUMNS} from delegation where user_id = ? and id in (${placeholders(delegationIds.length)})`,
    [userId, ...delegationIds],
  );
  return rows.map(delegationFromRow);
}

/** The user's delegation while it can still be used at `now` (Active, not expired), or null. */
export async function findUsableDelegation(
  em: Em,
  userId: string,
  delegationId: string,
  now: Date,
): Promise<DelegationEntity | null> {
  const [r] = await sql(em).all(
    `select ${COLUMNS} from delegation where id = ? and user_id = ? and status = 'Active' and expires_at > ?`,
    [delegationId, userId, now],
  );
  return r === undefined ? null : delegationFromRow(r);
}

/** Revokes each delegation still Active, each with the user it belongs to (never another user's). */
export async function revokeActiveOfUsers(
  em: Em,
  delegations: readonly { readonly id: string; readonly userId: string }[],
  now: Date,
): Promise<void> {
  if (delegations.length === 0) return;
  const pairs = delegations.map(() => '(id = ? and user_id = ?)').join(' or ');
  await sql(em).run(`update delegation set status = 'Revoked', revoked_at = ? where status = 'Active' and (${pairs})`, [
    now,
    ...delegations.flatMap((d) => [d.id, d.userId]),
  ]);
}

/** When each delegation was last charged: the newest `reserve` of its ledger (none: left out). */
export async function lastReservedAt(em: Em, delegationIds: readonly string[]): Promise<Map<string, Date>> {
  if (delegationIds.length === 0) return new Map();
  const rows = await sql(em).all(
    `select delegation_id as d, max(created_at) as last from delegation_transaction
     where kind = 'reserve' and delegation_id in (${placeholders(delegationIds.length)}) group by delegation_id`,
    [...delegationIds],
  );
  return new Map(rows.map((r) => [String(r.d), timestamp(r.last)]));
}
