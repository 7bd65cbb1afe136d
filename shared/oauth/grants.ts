// Grants after approval: whether one is still live, and its revocation. Revoking a grant revokes, in ONE
// transaction, the grant, every refresh token issued for it and its delegation, so no credential of the grant
// (a refresh token, or an access token whose grant is checked on use) can spend afterwards. Disabling a client
// revokes its live grants the same way (shared/oauth/clients.ts), in the transaction that disables it.
import type { InferEntity } from '@mikro-orm/core';
import type { ServiceContext } from '../context.js';
import {
  Delegation,
  type GrantRevokeReason,
  OAuthClient,
  OAuthGrant,
  OAuthRefreshToken,
} from '../db/entities/index.js';
import type { Em } from '../db/sql.js';

export type GrantRow = InferEntity<typeof OAuthGrant>;

/** What a revocation needs of a grant (its immutable part, read before the transaction). */
export type GrantRef = Pick<GrantRow, 'id' | 'userId' | 'delegationId'>;

/** Grants revoked per statement: bounds the size of each statement's `in` list, not the transaction. */
const REVOKE_BATCH = 200;

/**
 * Revokes the grants and everything issued for them; resolves with how many of them were still Active (the others
 * were revoked already, and stay as they were). Callers on SQLite run a write before it in their transaction (or
 * let this be its first statement, a write): that takes the write lock at once, so a writer in another process
 * makes this wait (busy timeout) instead of failing a read-to-write upgrade.
 */
export async function revokeGrantsIn(
  em: Em,
  grants: readonly GrantRef[],
  reason: GrantRevokeReason,
  now: Date,
): Promise<number> {
  let changed = 0;
  for (let i = 0; i < grants.length; i += REVOKE_BATCH) {
    const batch = grants.slice(i, i + REVOKE_BATCH);
    const ids = batch.map((g) => g.id);
    changed += await em.nativeUpdate(
      OAuthGrant,
      { id: { $in: ids }, status: 'Active' },
      { status: 'Revoked', revokedAt: now, revokedReason: reason },
    );
    await em.nativeUpdate(OAuthRefreshToken, { grantId: { $in: ids }, revokedAt: null }, { revokedAt: now });
    // Each delegation with the user it belongs to: a grant never revokes another user's delegation.
    await em.nativeUpdate(
      Delegation,
      { $or: batch.map((g) => ({ id: g.delegationId, userId: g.userId })), status: 'Active' },
      { status: 'Revoked', revokedAt: now },
    );
  }
  return changed;
}

/** Revokes one grant and everything issued for it; false when it was already revoked. */
export async function revokeGrantIn(em: Em, grant: GrantRef, reason: GrantRevokeReason, now: Date): Promise<boolean> {
  return (await revokeGrantsIn(em, [grant], reason, now)) === 1;
}

export async function revokeGrant(ctx: ServiceContext, grantId: string, reason: GrantRevokeReason): Promise<boolean> {
  const grant = await ctx.db.em().findOne(OAuthGrant, { id: grantId });
  if (grant === null) return false;
  const now = ctx.now();
  return ctx.db.em().transactional((em) => revokeGrantIn(em, grant, reason, now));
}

/** A grant that can still be used, with the end of its delegation (past which the grant is useless). */
export type LiveGrant = GrantRow & { readonly expiresAt: Date };

/**
 * The grant when it, its delegation and its client are still usable (not revoked, not expired, not disabled); null
 * otherwise. Disabling a client revokes its grants, so the client check matters only for a grant approved while
 * the client was being disabled (its consent read the client enabled before the disable committed, and wrote the
 * grant after the disable had swept): such a grant is refused here too, and can never be redeemed, since the
 * token endpoint refuses a disabled client.
 */
export async function liveGrant(em: Em, grantId: string, now: Date): Promise<LiveGrant | null> {
  const grant = await em.findOne(OAuthGrant, { id: grantId, status: 'Active' });
  if (grant === null) return null;
  const delegation = await em.findOne(Delegation, {
    id: grant.delegationId,
    userId: grant.userId,
    status: 'Active',
    expiresAt: { $gt: now },
  });
  if (delegation === null) return null;
  const client = await em.findOne(OAuthClient, { clientId: grant.clientId, disabledAt: null });
  return client === null ? null : Object.assign(grant, { expiresAt: delegation.expiresAt });
}
