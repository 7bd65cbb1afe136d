// Every statement on oauth_grant, all through the entity manager: a grant is written in the unit of work that
// creates its delegation (and the code or device approval that hands it over), and revoked in the transaction
// that revokes its refresh tokens and its delegation.
import type { InferEntity } from '@mikro-orm/core';
import { type GrantRevokeReason, OAuthGrant } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';

export type GrantRow = InferEntity<typeof OAuthGrant>;

/** What a revocation needs of a grant (its immutable part, read before the transaction). */
export type GrantRef = Pick<GrantRow, 'id' | 'userId' | 'delegationId'>;

/** Adds a new Active grant to `em`'s unit of work; the caller flushes it with its delegation. */
export function addGrant(em: Em, row: Omit<GrantRow, 'status' | 'revokedAt' | 'revokedReason'>): void {
  em.create(OAuthGrant, { ...row, status: 'Active', revokedAt: null, revokedReason: null });
}

export const findGrant = (em: Em, grantId: string): Promise<GrantRow | null> => em.findOne(OAuthGrant, { id: grantId });

export const findActiveGrant = (em: Em, grantId: string): Promise<GrantRow | null> =>
  em.findOne(OAuthGrant, { id: grantId, status: 'Active' });

/** The grant when it is `userId`'s (another user's is null too). */
export const findUserGrant = (em: Em, userId: string, grantId: string): Promise<GrantRow | null> =>
  em.findOne(OAuthGrant, { id: grantId, userId });

/** One page of the user's grants, newest first, and how many they have in all. */
export async function userGrantsPage(
  em: Em,
  userId: string,
  q: { page: number; offset: number },
): Promise<{ rows: GrantRow[]; total: number }> {
  const [rows, total] = await em.findAndCount(
    OAuthGrant,
    { userId },
    { orderBy: { createdAt: 'desc', id: 'asc' }, limit: q.offset, offset: (q.page - 1) * q.offset },
  );
  return { rows, total };
}

/** The client's Active grants, by id. */
export const activeGrantsOfClient = (em: Em, clientId: string): Promise<GrantRef[]> =>
  em.find(
    OAuthGrant,
    { clientId, status: 'Active' },
    { fields: ['id', 'userId', 'delegationId'], orderBy: { id: 'asc' } },
  );

/** Marks the grants Revoked, those still Active only; the number of them that were. */
export const revokeActiveGrants = (
  em: Em,
  grantIds: readonly string[],
  reason: GrantRevokeReason,
  now: Date,
): Promise<number> =>
  em.nativeUpdate(
    OAuthGrant,
    { id: { $in: [...grantIds] }, status: 'Active' },
    { status: 'Revoked', revokedAt: now, revokedReason: reason },
  );
