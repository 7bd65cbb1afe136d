// Every statement on `org_payment_method` and `org_payment_method_share` (which groups a card is shared with), in
// the entity manager's style (the style of the wallets and their shares, which these mirror). A new card goes into
// the caller's unit of work and is flushed with its transaction; a share's insert runs at once, as the first
// statement of the caller's transaction.
import type { InferEntity } from '@mikro-orm/core';
import { OrgPaymentMethod, OrgPaymentMethodShare } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';
import { insertIfAbsent } from './insert-if-absent.js';

export type PaymentMethodRow = InferEntity<typeof OrgPaymentMethod>;

const OLDEST_FIRST = { orderBy: { createdAt: 'asc', id: 'asc' } } as const;

/** Adds a card to `em`'s unit of work; the caller's transaction flushes it. */
export function addPaymentMethod(
  em: Em,
  row: { id: string; orgId: string; brand: string; last4: string; expMonth: number; expYear: number; createdAt: Date },
): void {
  em.create(OrgPaymentMethod, row);
}

export const paymentMethodById = (em: Em, orgId: string, id: string): Promise<PaymentMethodRow | null> =>
  em.findOne(OrgPaymentMethod, { id, orgId });

/** The organization's cards (only those among `ids` when given), oldest first. */
export const paymentMethodsOf = (em: Em, orgId: string, ids?: readonly string[]): Promise<PaymentMethodRow[]> =>
  em.find(OrgPaymentMethod, ids === undefined ? { orgId } : { orgId, id: { $in: [...ids] } }, OLDEST_FIRST);

/** The ids of the cards shared with any of `groupIds`, each once. */
export async function paymentMethodIdsSharedWith(
  em: Em,
  orgId: string,
  groupIds: readonly string[],
): Promise<string[]> {
  const shares = await em.find(OrgPaymentMethodShare, { orgId, groupId: { $in: [...groupIds] } });
  return [...new Set(shares.map((s) => s.paymentMethodId))];
}

/** Inserts the share at once unless the pair is shared already; whether it inserted. */
export const insertPaymentMethodShare = (
  tx: Em,
  row: { paymentMethodId: string; groupId: string; orgId: string; createdAt: Date },
): Promise<boolean> => insertIfAbsent(tx, OrgPaymentMethodShare, row, ['paymentMethodId', 'groupId']);
