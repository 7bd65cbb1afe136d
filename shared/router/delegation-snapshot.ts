import { LRUCache } from 'lru-cache';
import type { ApiKeyCaller } from '../auth/caller.js';
import type { ServiceContext } from '../context.js';
import { Delegation } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { delegationAccount, predictDelegationRefusal, refusalError } from '../spend/index.js';
import type { RouterServices } from './services.js';
import type { DelegationRow } from './pay.js';

export interface DelegationSnapshots {
  /** The owner's delegation as read at most `ttlMs` ago, or null when it is not the owner's. */
  get(userId: string, delegationId: string): Promise<DelegationRow | null>;
}

/**
 * Delegation snapshots (TTL <= 1 s, so a revocation is seen by every process within a second) for early refusal
 * and for choosing. A snapshot may be
 * stale in status, expiry and spent amount; that only refuses early or lets a request reach the issuance
 * transaction, whose conditional UPDATE decides every spend. Owner, provider, key binding, currency and
 * recipients never change. Misses are not cached, so a new delegation is usable at once.
 */
export function createDelegationSnapshots(
  ctx: ServiceContext,
  opts: { ttlMs?: number; max?: number } = {},
): DelegationSnapshots {
  const cache = new LRUCache<string, DelegationRow>({
    max: opts.max ?? 10_000,
    ttl: Math.min(opts.ttlMs ?? 1000, 1000),
  });
  return {
    async get(userId, delegationId) {
      const k = `${userId}\u0000${delegationId}`;
      const hit = cache.get(k);
      if (hit !== undefined) return hit;
      const d = await ctx.db.em().findOne(Delegation, { id: delegationId, userId });
      // A plain copy: the cache must not keep the entity's EntityManager (and its identity map) alive.
      if (d !== null) cache.set(k, { ...d });
      return d;
    },
  };
}

/**
 * The caller's own erc4337 delegation, for early refusal and for choosing (currency, allowed recipients). The
 * issuance transaction's conditional UPDATE decides the spend; this only refuses what cannot succeed.
 */
export async function spendableDelegation(
  services: RouterServices,
  principal: ApiKeyCaller,
  delegationId: string,
): Promise<DelegationRow> {
  const d = await services.delegations.get(principal.userId, delegationId);
  const account = delegationAccount(delegationId, principal.userId);
  if (d === null) throw refusalError(account, { reason: 'not_found' });
  if (d.provider !== 'erc4337')
    throw new AppError('BCK.ROUTER.0001', 'the router pays with erc4337 delegations only', { delegationId });
  if (d.apiKeyId != null && d.apiKeyId !== principal.apiKeyId) {
    throw new AppError('BCK.ROUTER.0003', 'this API key may not spend against the delegation', { delegationId });
  }
  // Any payment charges at least one cent: a cap with nothing left is refused here (as "exhausted").
  const refused = predictDelegationRefusal(d, 1n, services.ctx.now());
  if (refused !== undefined) throw refusalError(account, refused);
  return d;
}
