// Grants after approval: whether one is still live, and its revocation. Revoking a grant revokes, in ONE
// transaction, the grant, every refresh token issued for it and its delegation, so no credential of the grant
// (a refresh token, or an access token whose grant is checked on use) can spend afterwards. Disabling a client
// revokes its live grants the same way (shared/oauth/clients.ts), in the transaction that disables it.
import type { ServiceContext } from '../context.js';
import type { GrantRevokeReason } from '../db/entities/index.js';
import type { Em } from '../db/sql.js';
import { findUsableDelegation, revokeActiveOfUsers } from '../delegations/store.js';
import { findEnabledClient } from './store/clients.js';
import { type GrantRef, type GrantRow, findActiveGrant, findGrant, revokeActiveGrants } from './store/grants.js';
import { revokeRefreshTokensOf } from './store/refresh-tokens.js';

export type { GrantRef, GrantRow };

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
    changed += await revokeActiveGrants(em, ids, reason, now);
    await revokeRefreshTokensOf(em, ids, now);
    // Each delegation with the user it belongs to: a grant never revokes another user's delegation.
    await revokeActiveOfUsers(
      em,
      batch.map((g) => ({ id: g.delegationId, userId: g.userId })),
      now,
    );
  }
  return changed;
}

/** Revokes one grant and everything issued for it; false when it was already revoked. */
export async function revokeGrantIn(em: Em, grant: GrantRef, reason: GrantRevokeReason, now: Date): Promise<boolean> {
  return (await revokeGrantsIn(em, [grant], reason, now)) === 1;
}

export async function revokeGrant(ctx: ServiceContext, grantId: string, reason: GrantRevokeReason): Promise<boolean> {
  const grant = await findGrant(ctx.db.em(), grantId);
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
  const grant = await findActiveGrant(em, grantId);
  if (grant === null) return null;
  const delegation = await findUsableDelegation(em, grant.userId, grant.delegationId, now);
  if (delegation === null) return null;
  const client = await findEnabledClient(em, grant.clientId);
  return client === null ? null : Object.assign(grant, { expiresAt: delegation.expiresAt });
}
