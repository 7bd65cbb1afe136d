import { LRUCache } from 'lru-cache';
import type { ServiceContext } from '../context.js';
import type { InferEntity } from '@mikro-orm/core';
import type { Delegation } from '../db/entities/index.js';
import { cacheLookup } from '../metrics/caches.js';
import { findOwnDelegation } from '../delegations/store.js';

/** A delegation row as read (an entity's plain fields). */
export type DelegationRow = InferEntity<typeof Delegation>;

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
      const hit = cacheLookup('delegation_snapshot', cache.get(k));
      if (hit !== undefined) return hit;
      const d = await findOwnDelegation(ctx.db.em(), userId, delegationId);
      // A plain copy: the cache must not keep the entity's EntityManager (and its identity map) alive.
      if (d !== null) cache.set(k, { ...d });
      return d;
    },
  };
}
