// The router_payment store: every statement on the table (the insert that is the durable claim, status and
// fee-leg moves, reads). The services (steps/reserve.ts, steps/record.ts, payment-settled.ts, payment-listing.ts,
// payments-summary.ts, payment-duplicates.ts, cap-give-back.ts) call it.
import type { InferEntity } from '@mikro-orm/core';
import { raw } from '@mikro-orm/sql';
import type { ServiceContext } from '../context.js';
import { type PaymentStatus, RouterPayment } from '../db/entities/index.js';
import type { SqlTx } from '../db/sql.js';
import type { PaymentOwner } from './principal.js';

export type NewPayment = Omit<InferEntity<typeof RouterPayment>, 'createdAt' | 'updatedAt'>;

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

/** The payment that holds (user, scope, requestId): the winner of a lost durable claim. */
export async function paymentIdOf(
  ctx: ServiceContext,
  userId: string,
  requestScope: string,
  requestId: string,
): Promise<string | undefined> {
  return (await ctx.db.em().findOne(RouterPayment, { userId, requestScope, requestId }, { fields: ['id'] }))?.id;
}

/** The payment that signed `authNonce` (an MPP challenge is paid once). */
export async function paymentIdOfNonce(
  ctx: ServiceContext,
  userId: string,
  authNonce: string,
): Promise<string | undefined> {
  return (await ctx.db.em().findOne(RouterPayment, { userId, authNonce }, { fields: ['id'] }))?.id;
}

/** The user's payment `paymentId`, or null. */
export async function findOwnPayment(ctx: ServiceContext, userId: string, paymentId: string) {
  return ctx.db.em().findOne(RouterPayment, { id: paymentId, userId });
}

/** The payment `paymentId` (it exists: the caller read it before). */
export async function paymentById(ctx: ServiceContext, paymentId: string) {
  return ctx.db.em().findOneOrFail(RouterPayment, { id: paymentId });
}

/** The status and transaction a payment has now (read after a move that found it changed). */
export async function paymentStatusOf(ctx: ServiceContext, paymentId: string) {
  return ctx.db.em().findOne(RouterPayment, { id: paymentId }, { fields: ['status', 'txHash'] });
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

export interface PaymentQuery {
  delegationId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Rows per page (<= 1000). */
  limit: number;
  /** 1-based; default 1. */
  page?: number | undefined;
}

function whereOf(owner: PaymentOwner, q: Omit<PaymentQuery, 'limit'>) {
  const createdAt: Record<string, Date> = {};
  if (q.from !== undefined) createdAt.$gte = q.from;
  if (q.to !== undefined) createdAt.$lt = q.to;
  return {
    userId: owner.userId,
    // A connector reads only its own grant's payments.
    ...(owner.grantId === undefined ? {} : { grantId: owner.grantId }),
    // Payments are written Issued in one transaction; a Pending row can only be a claim an earlier version left
    // behind (a crash between its claim and its signature): never a payment.
    status: { $ne: 'Pending' as const },
    ...(q.delegationId === undefined ? {} : { delegationId: q.delegationId }),
    ...(Object.keys(createdAt).length === 0 ? {} : { createdAt }),
  };
}

/** The owner's payment rows, newest first (ties by id): page `page` of `limit` rows. */
export async function findPayments(ctx: ServiceContext, owner: PaymentOwner, q: PaymentQuery, limit: number) {
  return ctx.db.em().find(RouterPayment, whereOf(owner, q), {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit,
    offset: ((q.page ?? 1) - 1) * limit,
  });
}

/** Number of the caller's payments matching the listing's filters (the listing returns at most `limit` of them). */
export async function countPaymentRows(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: Omit<PaymentQuery, 'limit'>,
): Promise<number> {
  return ctx.db.em().count(RouterPayment, whereOf(owner, q));
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
  return ctx.db
    .em()
    .createQueryBuilder(RouterPayment)
    .select([raw(`${day} as d`), raw('count(*) as n')])
    .where(whereOf(owner, q))
    .groupBy(raw(day))
    .execute<{ d: unknown; n: unknown }[]>('all', false);
}
