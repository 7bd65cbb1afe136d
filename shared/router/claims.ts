// In-process idempotency claims on (user, requestId) (DESIGN §7 step 3), mppx Store.tryClaim-style: a
// concurrent duplicate in the same process is refused at once without a database round trip. The database's
// unique (user_id, request_id) key stays the durable claim across processes.
import { LRUCache } from 'lru-cache';

export interface ClaimStore {
  /** True when this caller now holds the claim; false when it is held already. */
  tryClaim(userId: string, requestId: string): boolean;
  release(userId: string, requestId: string): void;
}

export function createClaimStore(opts: { max?: number; ttlMs?: number } = {}): ClaimStore {
  // Bounded: a claim outlives its request only until the TTL; the database decides after that.
  const held = new LRUCache<string, true>({ max: opts.max ?? 100_000, ttl: opts.ttlMs ?? 10 * 60_000 });
  const key = (u: string, r: string) => `${u}\u0000${r}`;
  return {
    tryClaim(userId, requestId) {
      const k = key(userId, requestId);
      if (held.has(k)) return false;
      held.set(k, true);
      return true;
    },
    release(userId, requestId) {
      held.delete(key(userId, requestId));
    },
  };
}
