// Grants after approval: whether one is still live, and its revocation. Revoking a grant revokes, in ONE
// transaction, the grant, every refresh token issued for it and its delegation, so no credential of the grant
// (a refresh token, or an access token whose grant is checked on use) can spend afterwards.
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import { Delegation, type GrantRevokeReason, OAuthGrant, OAuthRefreshToken } from '../db/entities/index.js';
import type { Em } from '../db/sql.js';

export type GrantRow = InferEntity<typeof OAuthGrant>;

/** What a revocation needs of a grant (its immutable part, read before the transaction). */
export type GrantRef = Pick<GrantRow, 'id' | 'userId' | 'delegationId'>;

/**
 * Revokes the grant and everything issued for it; false when it was already revoked. The first statement is a
 * write: on SQLite that takes the write lock at once, so a writer in another process makes this wait (busy
 * timeout) instead of failing a read-to-write upgrade.
 */
export async function revokeGrantIn(em: Em, grant: GrantRef, reason: GrantRevokeReason, now: Date): Promise<boolean> {
  const changed = await em.nativeUpdate(
    OAuthGrant,
    { id: grant.id, status: 'Active' },
    { status: 'Revoked', revokedAt: now, revokedReason: reason },
  );
  await em.nativeUpdate(OAuthRefreshToken, { grantId: grant.id, revokedAt: null }, { revokedAt: now });
  await em.nativeUpdate(
    Delegation,
    { id: grant.delegationId, userId: grant.userId, status: 'Active' },
    { status: 'Revoked', revokedAt: now },
  );
  return changed === 1;
}

export async function revokeGrant(ctx: ServiceContext, grantId: string, reason: GrantRevokeReason): Promise<boolean> {
  const grant = await ctx.db.em().findOne(OAuthGrant, { id: grantId });
  if (grant === null) return false;
  const now = ctx.now();
  return ctx.db.em().transactional((em) => revokeGrantIn(em, grant, reason, now));
}

/** A grant that can still be used, with the end of its delegation (past which the grant is useless). */
export type LiveGrant = GrantRow & { readonly expiresAt: Date };

/** The grant when it and its delegation are still usable (not revoked, not expired); null otherwise. */
export async function liveGrant(em: Em, grantId: string, now: Date): Promise<LiveGrant | null> {
  const grant = await em.findOne(OAuthGrant, { id: grantId, status: 'Active' });
  if (grant === null) return null;
  const delegation = await em.findOne(Delegation, {
    id: grant.delegationId,
    userId: grant.userId,
    status: 'Active',
    expiresAt: { $gt: now },
  });
  return delegation === null ? null : Object.assign(grant, { expiresAt: delegation.expiresAt });
}
