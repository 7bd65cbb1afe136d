// The router_payment store: every statement on the table, all in hand SQL (shared/db/sql.ts), the one style the
// hot path needs: the insert that is the durable claim, the status and fee-leg moves (each a conditional UPDATE
// whose affected-row count says who moved it), the chain jobs' moves, and the reads, which map rows with
// paymentFromRow. The services (steps/, payment-settled.ts, payment-listing.ts, payments-summary.ts,
// payment-duplicates.ts, cap-give-back.ts) and the admin's jobs call it.
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import { FEE_STATUSES, PAYMENT_STATUSES, type PaymentStatus, type RouterPayment } from '../db/entities/index.js';
import { type SqlRow, type SqlTx, type SqlValue, emSql, int64, timestamp } from '../db/sql.js';
import type { PaymentOwner } from './principal.js';

export type PaymentRow = InferEntity<typeof RouterPayment>;
export type NewPayment = Omit<PaymentRow, 'createdAt' | 'updatedAt'>;

const PAYMENT_COLUMNS = [
  'id',
  'user_id',
  'api_key_id',
  'grant_id',
  'client_id',
  'request_scope',
  'request_id',
  'delegation_id',
  'mode',
  'protocol',
  'x402version',
  'status',
  'scheme',
  'network',
  'asset',
  'recipient',
  'amount',
  'amount_raw',
  'approx_cents',
  'fee_bps',
  'fee_amount',
  'fee_cents',
  'cap_charged_cents',
  'fee_recipient',
  'fee_status',
  'resource_url',
  'tx_hash',
  'failure_reason',
  'auth_nonce',
  'created_at',
  'updated_at',
] as const;
const INSERT_PAYMENT = `insert into router_payment (${PAYMENT_COLUMNS.join(', ')}) values (${PAYMENT_COLUMNS.map(() => '?').join(', ')})`;

/**
 * Inserts the payment row inside the issuance transaction. The unique (user_id, request_id) key is the durable
 * claim (router flow step 6, docs/architecture.md): a duplicate from any process fails the insert (`isUniqueViolation`).
 */
export async function insertPaymentIn(tx: SqlTx, r: NewPayment, now: Date): Promise<void> {
  await tx.run(INSERT_PAYMENT, [
    r.id,
    r.userId,
    r.apiKeyId ?? null,
    r.grantId ?? null,
    r.clientId ?? null,
    r.requestScope,
    r.requestId ?? null,
    r.delegationId,
    r.mode,
    r.protocol,
    r.x402Version ?? null,
    r.status,
    r.scheme,
    r.network,
    r.asset,
    r.recipient,
    r.amount,
    r.amountRaw,
    r.approxCents,
    r.feeBps,
    r.feeAmount,
    r.feeCents,
    r.capChargedCents,
    r.feeRecipient ?? null,
    r.feeStatus,
    r.resourceUrl ?? null,
    r.txHash ?? null,
    r.failureReason ?? null,
    r.authNonce ?? null,
    now,
    now,
  ]);
}

// The columns a read maps, the 64-bit ones as text: through the entity manager's connection better-sqlite3 hands
// BIGINT columns back as JavaScript numbers, which lose precision above 2^53; text reads exactly on both databases.
const INT64_COLUMNS = new Set(['amount', 'approx_cents', 'fee_amount', 'fee_cents', 'cap_charged_cents']);
const SELECT_PAYMENT = `select ${[...PAYMENT_COLUMNS, 'fee_tx_hash']
  .map((c) => (INT64_COLUMNS.has(c) ? `cast(${c} as text) as ${c}` : c))
  .join(', ')} from router_payment`;

/** Reads outside any transaction (each statement on its own). */
const reader = (ctx: ServiceContext): SqlTx => emSql(ctx.db.em(), ctx.db.dialect);

const text = (v: unknown): string => String(v);
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const small = (v: unknown): number => Number(int64(v));

/** A status column, checked against the entity's list: a value no version writes is an invariant failure. */
function oneOf<T extends string>(list: readonly T[], v: unknown): T {
  const found = list.find((s) => s === v);
  if (found === undefined) throw new TypeError(`router_payment holds an unknown state: ${String(v)}`);
  return found;
}

/** A router_payment row as the entity types it (64-bit columns as bigint, datetimes as Date). */
export function paymentFromRow(r: SqlRow): PaymentRow {
  return {
    id: text(r.id),
    userId: text(r.user_id),
    apiKeyId: textOrNull(r.api_key_id),
    grantId: textOrNull(r.grant_id),
    clientId: textOrNull(r.client_id),
    requestScope: text(r.request_scope),
    requestId: textOrNull(r.request_id),
    delegationId: text(r.delegation_id),
    mode: text(r.mode),
    protocol: text(r.protocol),
    x402Version: r.x402version === null || r.x402version === undefined ? null : small(r.x402version),
    status: oneOf(PAYMENT_STATUSES, r.status),
    scheme: text(r.scheme),
    network: text(r.network),
    asset: text(r.asset),
    recipient: text(r.recipient),
    amount: int64(r.amount),
    amountRaw: text(r.amount_raw),
    approxCents: int64(r.approx_cents),
    feeBps: small(r.fee_bps),
    feeAmount: int64(r.fee_amount),
    feeCents: int64(r.fee_cents),
    capChargedCents: int64(r.cap_charged_cents),
    feeRecipient: textOrNull(r.fee_recipient),
    feeStatus: oneOf(FEE_STATUSES, r.fee_status),
    resourceUrl: textOrNull(r.resource_url),
    txHash: textOrNull(r.tx_hash),
    feeTxHash: textOrNull(r.fee_tx_hash),
    failureReason: textOrNull(r.failure_reason),
    authNonce: textOrNull(r.auth_nonce),
    createdAt: timestamp(r.created_at),
    updatedAt: timestamp(r.updated_at),
  };
}

async function firstId(rows: Promise<SqlRow[]>): Promise<string | undefined> {
  const [r] = await rows;
  return r === undefined ? undefined : text(r.id);
}

/** The payment that holds (user, scope, requestId): the winner of a lost durable claim. */
export function paymentIdOf(
  ctx: ServiceContext,
  userId: string,
  requestScope: string,
  requestId: string,
): Promise<string | undefined> {
  return firstId(
    reader(ctx).all('select id from router_payment where user_id = ? and request_scope = ? and request_id = ?', [
      userId,
      requestScope,
      requestId,
    ]),
  );
}

/** The payment that signed `authNonce` (an MPP challenge is paid once). */
export function paymentIdOfNonce(ctx: ServiceContext, userId: string, authNonce: string): Promise<string | undefined> {
  return firstId(
    reader(ctx).all('select id from router_payment where user_id = ? and auth_nonce = ?', [userId, authNonce]),
  );
}

/** The user's payment `paymentId`, or null. */
export async function findOwnPayment(
  ctx: ServiceContext,
  userId: string,
  paymentId: string,
): Promise<PaymentRow | null> {
  const [r] = await reader(ctx).all(`${SELECT_PAYMENT} where id = ? and user_id = ?`, [paymentId, userId]);
  return r === undefined ? null : paymentFromRow(r);
}

/** The payment `paymentId` (it exists: the caller read it before). */
export async function paymentById(ctx: ServiceContext, paymentId: string): Promise<PaymentRow> {
  const [r] = await reader(ctx).all(`${SELECT_PAYMENT} where id = ?`, [paymentId]);
  if (r === undefined) throw new TypeError(`router_payment ${paymentId} is gone`);
  return paymentFromRow(r);
}

/** The status and transaction a payment has now (read after a move that found it changed). */
export async function paymentStatusOf(
  ctx: ServiceContext,
  paymentId: string,
): Promise<{ status: PaymentStatus; txHash: string | null } | null> {
  const [r] = await reader(ctx).all('select status, tx_hash from router_payment where id = ?', [paymentId]);
  return r === undefined ? null : { status: oneOf(PAYMENT_STATUSES, r.status), txHash: textOrNull(r.tx_hash) };
}

/** Moves a payment from status `from` to another inside the caller's transaction; false if it was no longer `from`. */
export async function updatePaymentIn(
  tx: SqlTx,
  paymentId: string,
  from: PaymentStatus,
  to: { status: PaymentStatus; txHash: string | null; failureReason: string | null },
  now: Date,
): Promise<boolean> {
  const n = await tx.run(
    'update router_payment set status = ?, tx_hash = ?, failure_reason = ?, updated_at = ? where id = ? and status = ?',
    [to.status, to.txHash, to.failureReason, now, paymentId, from],
  );
  return n === 1;
}

/**
 * Takes a reserved fee leg to `settled` or `released` inside the caller's transaction: true for the one caller
 * that moved it (who then moves the money), false if it was no longer reserved.
 */
export async function resolveFeeIn(
  tx: SqlTx,
  paymentId: string,
  feeStatus: 'settled' | 'released',
  now: Date,
): Promise<boolean> {
  const n = await tx.run(
    "update router_payment set fee_status = ?, updated_at = ? where id = ? and fee_status = 'reserved'",
    [feeStatus, now, paymentId],
  );
  return n === 1;
}

/**
 * Up to `max` mode B fee legs still reserved that were written before `olderThan`, for the fee sweep. Never a
 * `Pending` row: an earlier version wrote those as claims before reserving the cap (whereOf), so their fee was
 * never charged and must not be given back. The partial index router_payment_fee_reserved_index holds only
 * reserved legs: no scan of the payments.
 */
export async function staleFeeLegs(
  ctx: ServiceContext,
  olderThan: Date,
  max: number,
): Promise<{ id: string; delegationId: string; userId: string; feeCents: bigint }[]> {
  const rows = await reader(ctx).all(
    `select id, delegation_id, user_id, cast(fee_cents as text) as fee_cents from router_payment
     where fee_status = 'reserved' and created_at < ? and mode in ('route', 'proxy') and status <> 'Pending'
     limit ${Number(max)}`,
    [olderThan],
  );
  return rows.map((r) => ({
    id: text(r.id),
    delegationId: text(r.delegation_id),
    userId: text(r.user_id),
    feeCents: int64(r.fee_cents),
  }));
}

/** A Failed x402 payment whose authorization has expired (it was signed before `signedBefore`), for the ledger's release. */
export interface ExpiredFailure {
  readonly id: string;
  readonly delegationId: string;
  readonly userId: string;
  readonly capChargedCents: bigint;
  readonly feeCents: bigint;
  readonly feeStatus: (typeof FEE_STATUSES)[number];
}

/**
 * Up to `max` Failed x402 payments signed before `signedBefore`, after `afterId` in id order (UUIDv7: oldest first),
 * so a caller can page past the ones it could not release. Only x402: its validBefore is at
 * most ROUTER_MAX_AUTH_TTL_SECS after signing (steps/sign.ts), so the caller knows when it has expired; an MPP
 * authorization lives until its challenge's own `expires`, which is not kept.
 */
export async function expiredFailures(
  ctx: ServiceContext,
  signedBefore: Date,
  max: number,
  afterId = '',
): Promise<ExpiredFailure[]> {
  const rows = await reader(ctx).all(
    `select id, delegation_id, user_id, cast(cap_charged_cents as text) as cap_charged_cents,
            cast(fee_cents as text) as fee_cents, fee_status from router_payment
     where status = 'Failed' and protocol = 'x402' and created_at < ? and id > ? order by id limit ${Number(max)}`,
    [signedBefore, afterId],
  );
  return rows.map((r) => ({
    id: text(r.id),
    delegationId: text(r.delegation_id),
    userId: text(r.user_id),
    capChargedCents: int64(r.cap_charged_cents),
    feeCents: int64(r.fee_cents),
    feeStatus: oneOf(FEE_STATUSES, r.fee_status),
  }));
}

/** Failed -> Expired, once: false when another process (or an earlier run) moved it first. */
export async function expireFailedIn(tx: SqlTx, paymentId: string, now: Date): Promise<boolean> {
  const n = await tx.run(
    "update router_payment set status = 'Expired', updated_at = ? where id = ? and status = 'Failed'",
    [now, paymentId],
  );
  return n === 1;
}

/**
 * The chain saw the payment's authorization used: Settled with the chain's transaction, which replaces whatever a
 * merchant's receipt claimed; from Failed too (the merchant refused the call but collected the authorization
 * anyway: it was paid).
 */
export async function settleOnChainIn(tx: SqlTx, paymentId: string, txHash: string | null, now: Date): Promise<void> {
  await tx.run(
    "update router_payment set status = 'Settled', tx_hash = coalesce(?, tx_hash), updated_at = ? where id = ? and status in ('Issued', 'Failed', 'Settled')",
    [txHash, now, paymentId],
  );
}

/** What giving back an expired authorization's cap charge needs to know of its payment. */
export interface ExpiringPayment {
  readonly userId: string;
  readonly delegationId: string;
  readonly capChargedCents: bigint;
  readonly feeCents: bigint;
  readonly feeStatus: PaymentRow['feeStatus'];
  readonly feeTxHash: string | null;
}

export async function expiringPaymentIn(tx: SqlTx, paymentId: string): Promise<ExpiringPayment | undefined> {
  const [p] = await tx.all(
    'select user_id, delegation_id, cap_charged_cents, fee_cents, fee_status, fee_tx_hash from router_payment where id = ?',
    [paymentId],
  );
  if (p === undefined) return undefined;
  return {
    userId: text(p.user_id),
    delegationId: text(p.delegation_id),
    capChargedCents: int64(p.cap_charged_cents),
    feeCents: int64(p.fee_cents),
    feeStatus: oneOf(FEE_STATUSES, p.fee_status),
    feeTxHash: textOrNull(p.fee_tx_hash),
  };
}

/** The authorization expired unused: the payment is Expired (the caller moved its reservation off `open` once). */
export async function expirePaymentIn(tx: SqlTx, paymentId: string, now: Date): Promise<void> {
  await tx.run("update router_payment set status = 'Expired', updated_at = ? where id = ?", [now, paymentId]);
}

/** The fee leg goes with its payment: released whatever it was (the caller moved its reservation once). */
export async function releaseFeeStatusIn(tx: SqlTx, paymentId: string, now: Date): Promise<void> {
  await tx.run("update router_payment set fee_status = 'released', updated_at = ? where id = ?", [now, paymentId]);
}

/** The operator's transaction that collected the fee leg on chain. */
export async function recordFeeTransactionIn(tx: SqlTx, paymentId: string, txHash: string, now: Date): Promise<void> {
  await tx.run('update router_payment set fee_tx_hash = ?, updated_at = ? where id = ?', [txHash, now, paymentId]);
}

export interface PaymentQuery {
  delegationId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Rows per page (<= 1000). */
  limit: number;
  /** 1-based; default 1. */
  page?: number | undefined;
}

/** The listing's filters as a WHERE clause over router_payment, with its bound values. */
function whereOf(owner: PaymentOwner, q: Omit<PaymentQuery, 'limit'>): { sql: string; params: SqlValue[] } {
  // Payments are written Issued in one transaction; a Pending row can only be a claim an earlier version left
  // behind (a crash between its claim and its signature): never a payment.
  const terms = ['user_id = ?', "status <> 'Pending'"];
  const params: SqlValue[] = [owner.userId];
  // A connector reads only its own grant's payments.
  if (owner.grantId !== undefined) {
    terms.push('grant_id = ?');
    params.push(owner.grantId);
  }
  if (q.delegationId !== undefined) {
    terms.push('delegation_id = ?');
    params.push(q.delegationId);
  }
  if (q.from !== undefined) {
    terms.push('created_at >= ?');
    params.push(q.from);
  }
  if (q.to !== undefined) {
    terms.push('created_at < ?');
    params.push(q.to);
  }
  return { sql: terms.join(' and '), params };
}

/** The owner's payment rows, newest first (ties by id): page `page` of `limit` rows. */
export async function findPayments(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: PaymentQuery,
  limit: number,
): Promise<PaymentRow[]> {
  const where = whereOf(owner, q);
  const offset = ((q.page ?? 1) - 1) * limit;
  const rows = await reader(ctx).all(
    `${SELECT_PAYMENT} where ${where.sql} order by created_at desc, id desc limit ${Number(limit)} offset ${Number(offset)}`,
    where.params,
  );
  return rows.map(paymentFromRow);
}

/** Number of the caller's payments matching the listing's filters (the listing returns at most `limit` of them). */
export async function countPaymentRows(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: Omit<PaymentQuery, 'limit'>,
): Promise<number> {
  const where = whereOf(owner, q);
  const [r] = await reader(ctx).all(`select count(*) as n from router_payment where ${where.sql}`, where.params);
  return r === undefined ? 0 : small(r.n);
}

export const DAY_MS = 86_400_000;

/** Number of the owner's payments per UTC day (`d`: days since the epoch), one row per day with payments. */
export async function dailyPaymentCounts(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: Omit<PaymentQuery, 'limit'>,
): Promise<{ d: unknown; n: unknown }[]> {
  // SQLite keeps created_at as epoch milliseconds (MikroORM); PostgreSQL as timestamptz. The filters are the
  // listing's (whereOf).
  const day = ctx.db.dialect === 'sqlite' ? `created_at / ${DAY_MS}` : 'floor(extract(epoch from created_at) / 86400)';
  const where = whereOf(owner, q);
  const rows = await reader(ctx).all(
    `select ${day} as d, count(*) as n from router_payment where ${where.sql} group by ${day}`,
    where.params,
  );
  return rows.map((r) => ({ d: r.d, n: r.n }));
}
