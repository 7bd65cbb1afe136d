// In-process idempotency claims on (user, requestId) (DESIGN §7 step 3), mppx Store.tryClaim-style: a
// concurrent duplicate in the same process is refused without touching the merchant or the database. It waits
// only for the first request's paymentId (known once the durable claim is in), so its 409 can name it. The
// database's unique (user_id, request_id) key stays the durable claim across processes.
import { LRUCache } from 'lru-cache';

interface Entry {
  paymentId: string | undefined;
  settle: (paymentId: string | undefined) => void;
  known: Promise<string | undefined>;
}

export type ClaimAttempt = { type: 'claimed' } | { type: 'held'; paymentId: Promise<string | undefined> };

export interface ClaimStore {
  tryClaim(userId: string, requestId: string): ClaimAttempt;
  /** The durable claim is in: duplicates may now be told the paymentId. */
  assign(userId: string, requestId: string, paymentId: string): void;
  /** Refused before signing: the requestId may be retried. */
  release(userId: string, requestId: string): void;
}

export function createClaimStore(opts: { max?: number; ttlMs?: number } = {}): ClaimStore {
  // Bounded: a claim outlives its request only until the TTL; the database decides after that.
  const held = new LRUCache<string, Entry>({ max: opts.max ?? 100_000, ttl: opts.ttlMs ?? 10 * 60_000 });
  const key = (u: string, r: string) => `${u}\u0000${r}`;
  return {
    tryClaim(userId, requestId) {
      const k = key(userId, requestId);
      const existing = held.get(k);
      if (existing !== undefined) {
        return { type: 'held', paymentId: existing.paymentId !== undefined ? Promise.resolve(existing.paymentId) : existing.known };
      }
      let settle: (p: string | undefined) => void = () => {};
      const known = new Promise<string | undefined>((resolve) => {
        settle = resolve;
      });
      held.set(k, { paymentId: undefined, settle, known });
      return { type: 'claimed' };
    },
    assign(userId, requestId, paymentId) {
      const e = held.get(key(userId, requestId));
      if (e === undefined) return;
      e.paymentId = paymentId;
      e.settle(paymentId);
    },
    release(userId, requestId) {
      const k = key(userId, requestId);
      held.get(k)?.settle(undefined);
      held.delete(k);
    },
  };
}
