// Router payment rows: the durable claim (router flow step 6, docs/architecture.md), state changes, the ledger listing and summary.
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import { raw } from '@mikro-orm/sql';
import type { Hex } from 'viem';
import { ChainReservation, type FeeStatus, type PaymentStatus, RouterPayment } from '../db/entities/index.js';
import type { SqlTx } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { groupBudgetOfDelegationIn } from '../organizations/spending.js';
import { ChainUnavailable, type ChainClient } from '../settlement/chain/client.js';
import { chainUnavailableError } from '../settlement/chain/errors.js';
import { feeReservationId, markSpentIn, releaseReservationIn } from '../settlement/chain/reservations.js';
import { type Charge, delegationAccount, releaseIn } from '../spend/index.js';
import { type PaymentRecord, paymentRecord } from './responses.js';
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
 * Releases a reserved fee leg inside the caller's transaction: fee_status to `released` (once: false if it was no
 * longer reserved) and its cap share given back. The one release of a fee leg, for the paid call's
 * outcome (pay.ts) and for the sweep of legs nobody resolved (fee-sweep.ts).
 */
export async function releaseFeeLegIn(
  tx: SqlTx,
  leg: { paymentId: string; delegationId: string; userId: string; feeCents: bigint; description: string },
  now: Date,
): Promise<boolean> {
  if (!(await resolveFeeIn(tx, leg.paymentId, 'released', now))) return false;
  // The rpc backend reserved the leg against the buyer's on-chain funds: they are free again (no-op on the ledger).
  await releaseReservationIn(tx, feeReservationId(leg.paymentId), now);
  await giveBackCapIn(tx, { ...leg, cents: leg.feeCents }, now);
  return true;
}

/**
 * Gives `cents` of a payment's cap charge back to its delegation, inside the caller's transaction. A payment from an
 * organization wallet charged its group's budget with the cap too: the budget gets them back as well (only within
 * the period the charge fell in). The caller makes it happen once (a status it moved).
 */
export async function giveBackCapIn(
  tx: SqlTx,
  back: { paymentId: string; delegationId: string; userId: string; cents: bigint; description: string },
  now: Date,
): Promise<void> {
  if (back.cents <= 0n) return;
  const budget = await groupBudgetOfDelegationIn(tx, back.delegationId);
  const charges: Charge[] = [{ account: delegationAccount(back.delegationId, back.userId), amountCents: back.cents }];
  if (budget !== undefined) charges.push({ account: budget, amountCents: back.cents });
  await releaseIn(tx, { charges, reference: back.paymentId, description: back.description }, now);
}

export async function setPaymentStatus(
  ctx: ServiceContext,
  paymentId: string,
  from: readonly PaymentStatus[],
  to: { status: PaymentStatus; txHash?: string | null; failureReason?: string | null; feeStatus?: FeeStatus },
): Promise<boolean> {
  const n = await ctx.db
    .em()
    .nativeUpdate(RouterPayment, { id: paymentId, status: { $in: [...from] } }, { ...to, updatedAt: ctx.now() });
  return n === 1;
}

/**
 * The payment a refused insert collided with: the same requestId (409 BCK.ROUTER.0002), or the same signed
 * authorization nonce, i.e. an MPP challenge paid already (409 BCK.ROUTER.0013); both name the first payment.
 */
export async function duplicateOf(
  ctx: ServiceContext,
  userId: string,
  requestScope: string,
  requestId: string | undefined,
  authNonce: string,
  cause: unknown,
): Promise<unknown> {
  if (requestId !== undefined) {
    const first = await paymentIdOf(ctx, userId, requestScope, requestId);
    if (first !== undefined) return duplicateError(first);
  }
  const paid = (await ctx.db.em().findOne(RouterPayment, { userId, authNonce }, { fields: ['id'] }))?.id;
  if (paid !== undefined) {
    return new AppError('BCK.ROUTER.0013', {
      details: `this challenge was paid already: payment ${paid}`,
      params: { paymentId: paid },
      extra: { paymentId: paid },
    });
  }
  // The row that held the key is gone again (rolled back meanwhile): the original error.
  return cause;
}

export function duplicateError(paymentId: string): AppError {
  return new AppError('BCK.ROUTER.0002', {
    details: `a payment exists for this requestId: ${paymentId}`,
    params: { paymentId },
    extra: { paymentId },
  });
}

/**
 * POST /router/payments/{id}/settled: records the on-chain transaction of an issued payment credential. With the rpc backend
 * (`chain`) the transaction is checked first: it must be mined (409 BCK.ROUTER.0014), have succeeded (0015) and have
 * used this payment's authorization, i.e. emitted the payment token's AuthorizationUsed for its payer and nonce
 * (0016). With the ledger backend there is no chain to ask, and the caller's word is recorded.
 */
export async function recordSettled(
  ctx: ServiceContext,
  chain: ChainClient | undefined,
  userId: string,
  paymentId: string,
  txHash: string,
): Promise<PaymentRecord> {
  // A transaction hash is hex: compared and stored in lower case, so 0xAB.. and 0xab.. are the same hash.
  const hash = txHash.toLowerCase();
  const row = await ctx.db.em().findOne(RouterPayment, { id: paymentId, userId });
  if (row === null) throw new AppError('BCK.ROUTER.0004', { details: `payment ${paymentId} not found` });
  const sameHash = (r: { status: string; txHash?: string | null | undefined }) =>
    r.status === 'Settled' && r.txHash?.toLowerCase() === hash;
  if (sameHash(row)) return paymentRecord(row); // same hash again: no-op
  const spentIn = chain === undefined ? undefined : await checkSettlingTransaction(ctx, chain, row, hash);
  const moved = await ctx.db.sql.transaction(
    async (tx) => {
      // The reservation is spent in the transaction's block (the reconciler would have found the same).
      if (spentIn !== undefined) await markSpentIn(tx, row.id, { block: spentIn, txHash: hash }, ctx.now());
      return updatePaymentIn(tx, row.id, 'Issued', { status: 'Settled', txHash: hash, failureReason: null }, ctx.now());
    },
    { serializeOn: row.id },
  );
  if (!moved) {
    // Lost a race (another /settled, or the paid call's outcome): read what won; the same hash is still a no-op.
    const now = await ctx.db.em().findOneOrFail(RouterPayment, { id: paymentId });
    if (sameHash(now)) return paymentRecord(now);
    throw new AppError('BCK.ROUTER.0005', {
      details: `payment ${paymentId} is ${now.status}${now.txHash ? ' with another txHash' : ''}`,
    });
  }
  return paymentRecord(await ctx.db.em().findOneOrFail(RouterPayment, { id: paymentId }));
}

/** The block of the transaction `hash` if it settled this payment on chain; else the 409 saying why not. */
async function checkSettlingTransaction(
  ctx: ServiceContext,
  chain: ChainClient,
  row: { id: string; asset: string; authNonce?: string | null | undefined },
  hash: string,
): Promise<bigint> {
  if (!/^0x[0-9a-f]{64}$/.test(hash))
    throw new AppError('BCK.ROUTER.0014', { details: `no transaction has the hash ${hash}` });
  const mined = await chain.minedTransaction(hash as Hex).catch((err: unknown) => {
    throw err instanceof ChainUnavailable ? chainUnavailableError(err) : err;
  });
  if (mined === undefined)
    throw new AppError('BCK.ROUTER.0014', { details: `transaction ${hash} is not mined on chain` });
  if (mined.status !== 'success') throw new AppError('BCK.ROUTER.0015', { details: `transaction ${hash} reverted` });
  // The payer is the reservation's wallet (a payment written under the ledger backend has none: nonce and token decide).
  const reservation = await ctx.db.em().findOne(ChainReservation, { id: row.id }, { fields: ['address'] });
  const nonce = row.authNonce?.toLowerCase();
  const used = mined.authorizations.some(
    (a) =>
      a.token.toLowerCase() === row.asset.toLowerCase() &&
      a.nonce.toLowerCase() === nonce &&
      (reservation === null || a.authorizer.toLowerCase() === reservation.address.toLowerCase()),
  );
  if (!used)
    throw new AppError('BCK.ROUTER.0016', {
      details: `transaction ${hash} did not use the authorization of payment ${row.id}`,
    });
  return mined.blockNumber;
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

/** The owner's payments, newest first (ties by id): page `page` of `limit` (<= 1000) rows. */
export async function listPayments(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: PaymentQuery,
): Promise<PaymentRecord[]> {
  const limit = Math.min(q.limit, 1000);
  const rows = await ctx.db.em().find(RouterPayment, whereOf(owner, q), {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit,
    offset: ((q.page ?? 1) - 1) * limit,
  });
  return rows.map(paymentRecord);
}

const CSV_COLUMNS = [
  'paymentId',
  'createdAt',
  'status',
  'protocol',
  'x402Version',
  'delegationId',
  'clientId',
  'requestId',
  'recipient',
  'amount',
  'asset',
  'network',
  'scheme',
  'approxCents',
  'feeBps',
  'feeAmount',
  'feeCents',
  'capChargedCents',
  'txHash',
  'resourceUrl',
] as const;

/** RFC 4180 CSV; cells that a spreadsheet would run as a formula are prefixed with a quote (CWE-1236). */
export function paymentsCsv(records: readonly PaymentRecord[]): string {
  const cell = (v: unknown): string => {
    let s = v === null || v === undefined ? '' : String(v);
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  const lines = records.map((r) =>
    [
      r.paymentId,
      r.createdAt,
      r.status,
      r.protocol,
      r.x402Version ?? '',
      r.delegationId,
      r.clientId,
      r.requestId,
      r.settlement.recipient,
      r.settlement.amount,
      r.settlement.asset,
      r.settlement.network,
      r.settlement.scheme,
      r.settlement.approxCents,
      r.fee.bps,
      r.fee.amount,
      r.fee.cents,
      r.fee.capChargedCents,
      r.txHash,
      r.resourceUrl,
    ]
      .map(cell)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}

export type Granularity = 'day' | 'week' | 'month';

/** Start of the UTC bucket holding `d`: days, ISO weeks starting Monday, calendar months. */
export function bucketStart(d: Date, g: Granularity): string {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (g === 'month') return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
  const day = new Date(Date.UTC(y, m, d.getUTCDate()));
  if (g === 'week') day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString().slice(0, 10);
}

/** Number of the caller's payments matching the listing's filters (the listing returns at most `limit` of them). */
export async function countPayments(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: Omit<PaymentQuery, 'limit'>,
): Promise<number> {
  return ctx.db.em().count(RouterPayment, whereOf(owner, q));
}

const DAY_MS = 86_400_000;

/**
 * GET /router/payments/summary: number of payments per UTC bucket. The database counts per UTC day (one row per
 * day with payments, whatever their number); days are folded into weeks or months here.
 */
export async function paymentsSummary(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: { granularity: Granularity; delegationId?: string | undefined; from?: Date | undefined; to?: Date | undefined },
): Promise<{ total: number; series: { date: string; value: number }[] }> {
  // SQLite keeps created_at as epoch milliseconds (MikroORM); PostgreSQL as timestamptz. The filters are the
  // listing's (whereOf).
  const day = ctx.db.dialect === 'sqlite' ? `created_at / ${DAY_MS}` : 'floor(extract(epoch from created_at) / 86400)';
  const rows = await ctx.db
    .em()
    .createQueryBuilder(RouterPayment)
    .select([raw(`${day} as d`), raw('count(*) as n')])
    .where(whereOf(owner, q))
    .groupBy(raw(day))
    .execute<{ d: unknown; n: unknown }[]>('all', false);
  const counts = new Map<string, number>();
  let total = 0;
  for (const r of rows) {
    const n = Number(r.n);
    const k = bucketStart(new Date(Number(r.d) * DAY_MS), q.granularity);
    counts.set(k, (counts.get(k) ?? 0) + n);
    total += n;
  }
  const series = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, value]) => ({ date, value }));
  return { total, series };
}
