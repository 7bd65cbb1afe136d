// Enrolled cards of an organization (sandbox payment methods): only what a receipt shows (brand, last four digits,
// expiry) is stored, never a card number. An Admin enrolls cards and shares them with groups; Admins see every
// card, a Member the cards shared with their active groups.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import type { Em } from '../db/orm.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { line } from '../text.js';
import { type OrgCaller, adminOf, isUuid, memberOf } from './org-caller.js';
import { recordActivity } from '../org-activity/store.js';
import { memberGroupIds } from './member-groups.js';
import { activeGroupIn, requireStillActive } from './wallet-shares.js';
import {
  type PaymentMethodRow,
  addPaymentMethod,
  insertPaymentMethodShare,
  paymentMethodById,
  paymentMethodIdsSharedWith,
  paymentMethodsOf,
} from './store/payment-methods.js';

export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover'] as const;

/** Cards are issued for a few years at most: a year further ahead than this is a typo, not a card. */
export const MAX_EXPIRY_YEARS_AHEAD = 20;

/**
 * The enrollment body, judged by the service's clock `now` (UTC): a card that expired is refused, one that
 * expires at the end of this month is still good (a card is valid through its expiry month).
 */
export function enrollPaymentMethodBody(now: Date) {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  return z
    .strictObject({
      brand: z.enum(CARD_BRANDS),
      last4: z.string().regex(/^[0-9]{4}$/, 'must be exactly 4 digits'),
      expMonth: z.number().int().min(1).max(12),
      expYear: z
        .number()
        .int()
        .min(year, `must not be in the past (the year is ${year})`)
        .max(year + MAX_EXPIRY_YEARS_AHEAD),
    })
    .refine((b) => b.expYear > year || b.expMonth >= month, {
      message: `the card has expired (the month is ${year}-${String(month).padStart(2, '0')})`,
      path: ['expMonth'],
    });
}
export type EnrollPaymentMethodInput = z.output<ReturnType<typeof enrollPaymentMethodBody>>;

export const SharePaymentMethodBody = z.strictObject({ paymentMethodId: line(100) });

export interface PaymentMethodRecord {
  readonly paymentMethodId: string;
  readonly brand: string;
  readonly last4: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly createdAt: Date;
}

const record = (
  p: Pick<PaymentMethodRow, 'id' | 'brand' | 'last4' | 'expMonth' | 'expYear' | 'createdAt'>,
): PaymentMethodRecord => ({
  paymentMethodId: p.id,
  brand: p.brand,
  last4: p.last4,
  expMonth: p.expMonth,
  expYear: p.expYear,
  createdAt: p.createdAt,
});

/** A card of the caller's organization (404 BCK.ORG.0007 otherwise, whatever organization it belongs to). */
async function paymentMethodIn(em: Em, org: OrgCaller, paymentMethodId: string): Promise<PaymentMethodRow> {
  const p = isUuid(paymentMethodId) ? await paymentMethodById(em, org.orgId, paymentMethodId) : null;
  if (p === null) throw new AppError('BCK.ORG.0007', { details: `payment method ${paymentMethodId} not found` });
  return p;
}

export async function enrollPaymentMethod(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  input: EnrollPaymentMethodInput,
): Promise<PaymentMethodRecord> {
  const org = await adminOf(ctx, userId, orgId);
  const row = { id: randomUUID(), orgId: org.orgId, ...input, createdAt: ctx.now() };
  // Only inserts in the transaction: on SQLite the first statement takes the write lock.
  await ctx.db.em().transactional(async (tx) => {
    addPaymentMethod(tx, row);
    await recordActivity(
      emSql(tx),
      {
        orgId: org.orgId,
        eventType: 'payment_method.enrolled',
        actorUserId: userId,
        subjectType: 'payment_method',
        subjectId: row.id,
        details: { brand: row.brand, last4: row.last4 },
      },
      row.createdAt,
    );
  });
  return record(row);
}

/** Every card for an Admin; for a Member the cards shared with their active groups. Oldest first. */
export async function listPaymentMethods(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
): Promise<PaymentMethodRecord[]> {
  const org = await memberOf(ctx, userId, orgId);
  const em = ctx.db.em();
  if (org.role === 'Admin') return (await paymentMethodsOf(em, org.orgId)).map(record);
  const groups = await memberGroupIds(em, org);
  if (groups.length === 0) return [];
  const ids = await paymentMethodIdsSharedWith(em, org.orgId, groups);
  if (ids.length === 0) return [];
  return (await paymentMethodsOf(em, org.orgId, ids)).map(record);
}

/** Shares a card with an active group (Admin only); sharing twice is 409 BCK.ORG.0008, as for wallets. */
export async function sharePaymentMethod(
  ctx: ServiceContext,
  userId: string,
  orgId: string,
  groupId: string,
  paymentMethodId: string,
): Promise<void> {
  const org = await adminOf(ctx, userId, orgId);
  const em = ctx.db.em();
  await activeGroupIn(em, org, groupId);
  await paymentMethodIn(em, org, paymentMethodId);
  const now = ctx.now();
  await em.transactional(async (tx) => {
    // The insert first (the SQLite write lock at once); zero rows inserted: shared already.
    if (!(await insertPaymentMethodShare(tx, { paymentMethodId, groupId, orgId: org.orgId, createdAt: now }))) {
      throw new AppError('BCK.ORG.0008', {
        details: `payment method ${paymentMethodId} is already shared with group ${groupId}`,
      });
    }
    await requireStillActive(tx, org.orgId, groupId);
    await recordActivity(
      emSql(tx),
      {
        orgId: org.orgId,
        eventType: 'payment_method.shared',
        actorUserId: userId,
        subjectType: 'payment_method',
        subjectId: paymentMethodId,
        details: { groupId },
      },
      now,
    );
  });
}
