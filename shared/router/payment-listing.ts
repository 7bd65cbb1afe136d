// GET /router/payments: the owner's ledger, a page at a time, and how many payments match its filters.
import type { ServiceContext } from '../context.js';
import type { PaymentOwner } from './principal.js';
import { type PaymentQuery, countPaymentRows, findPayments } from './payment-store.js';
import { type PaymentRecord, paymentRecord } from './responses.js';

/** The owner's payments, newest first (ties by id): page `page` of `limit` (<= 1000) rows. */
export async function listPayments(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: PaymentQuery,
): Promise<PaymentRecord[]> {
  const limit = Math.min(q.limit, 1000);
  const rows = await findPayments(ctx, owner, q, limit);
  return rows.map(paymentRecord);
}

/** Number of the caller's payments matching the listing's filters (the listing returns at most `limit` of them). */
export async function countPayments(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: Omit<PaymentQuery, 'limit'>,
): Promise<number> {
  return countPaymentRows(ctx, owner, q);
}
