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
  /** The paymentId is known (issuance under way): duplicates are told it at once; the claim stays in flight. */
  announce(userId: string, requestId: string, paymentId: string): void;
  /** Signed and recorded: the requestId is spent; duplicates are told the paymentId until the claim expires. */
  assign(userId: string, requestId: string, paymentId: string): void;
  /** Refused before signing: the requestId may be retried. */
  release(userId: string, requestId: string): void;
}

export function createClaimStore(opts: { max?: number; ttlMs?: number } = {}): ClaimStore {
  // In flight: a plain Map, bounded by the per-user concurrency limit (every entry belongs to a running request,
  // which removes or keeps it when it ends). Kept claims (signed, so spent): a bounded LRU whose entries outlive
  // their request until the TTL; the database's unique key decides after that. A free call never reaches the
  // LRU: its claim is set and deleted in the Map (an LRU delete with TTL costs ~4% of the relay's CPU).
  const inFlight = new Map<string, Entry>();
  const kept = new LRUCache<string, Entry>({ max: opts.max ?? 100_000, ttl: opts.ttlMs ?? 10 * 60_000 });
  const key = (u: string, r: string) => `${u}\u0000${r}`;
  return {
    tryClaim(userId, requestId) {
      const k = key(userId, requestId);
      const existing = inFlight.get(k) ?? kept.get(k);
      if (existing !== undefined) {
        return { type: 'held', paymentId: existing.paymentId !== undefined ? Promise.resolve(existing.paymentId) : existing.known };
      }
      let settle: (p: string | undefined) => void = () => {};
      const known = new Promise<string | undefined>((resolve) => {
        settle = resolve;
      });
      inFlight.set(k, { paymentId: undefined, settle, known });
      return { type: 'claimed' };
    },
    announce(userId, requestId, paymentId) {
      const e = inFlight.get(key(userId, requestId));
      if (e === undefined) return;
      e.paymentId = paymentId;
      e.settle(paymentId);
    },
    assign(userId, requestId, paymentId) {
      const k = key(userId, requestId);
      const e = inFlight.get(k) ?? kept.get(k);
      if (e === undefined) return;
      e.paymentId = paymentId;
      e.settle(paymentId);
      // Spent: from now on the claim outlives the request.
      inFlight.delete(k);
      kept.set(k, e);
    },
    release(userId, requestId) {
      const k = key(userId, requestId);
      const e = inFlight.get(k);
      if (e !== undefined) {
        inFlight.delete(k);
      } else {
        const held = kept.get(k);
        if (held === undefined) return;
        kept.delete(k);
        held.settle(undefined);
        return;
      }
      e.settle(undefined);
    },
  };
}
