// In-process requestId claims on (user, requestId) (router flow step 3, docs/architecture.md), mppx Store.tryClaim-style: a
// concurrent duplicate in the same process is refused without touching the merchant or the database. It waits
// only for the first request's paymentId (known once the durable claim is in), so its 409 can name it. The
// database's unique (user_id, request_id) key stays the durable claim across processes.
import { LRUCache } from 'lru-cache';
import { cacheLookup } from '../metrics/caches.js';

interface Entry {
  paymentId: string | undefined;
  /** Set once the paymentId is known or the claim is given back. */
  settled: boolean;
  /** Duplicates waiting for the paymentId; made only when one asks (most claims never see a duplicate). */
  waiters: ((paymentId: string | undefined) => void)[] | undefined;
}

function settle(e: Entry, paymentId: string | undefined): void {
  if (e.settled) return;
  e.settled = true;
  const waiters = e.waiters;
  e.waiters = undefined;
  if (waiters !== undefined) for (const w of waiters) w(paymentId);
}

function known(e: Entry): Promise<string | undefined> {
  if (e.paymentId !== undefined) return Promise.resolve(e.paymentId);
  if (e.settled) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    e.waiters ??= [];
    e.waiters.push(resolve);
  });
}

export type ClaimAttempt = { type: 'claimed' } | { type: 'held'; paymentId: Promise<string | undefined> };

export interface RequestClaimStore {
  /** `owner` is whose requestIds these are: a user, or a user's grant (request-claims.ts). */
  tryClaim(owner: string, requestId: string): ClaimAttempt;
  /** Signed and recorded: the requestId is spent; duplicates are told the paymentId until the claim expires. */
  assign(owner: string, requestId: string, paymentId: string): void;
  /** Refused before signing: the requestId may be retried. */
  release(owner: string, requestId: string): void;
}

export function createRequestClaimStore(opts: { max?: number; ttlMs?: number } = {}): RequestClaimStore {
  // In flight: a plain Map, bounded by the per-user concurrency limit (every entry belongs to a running request,
  // which removes or keeps it when it ends). Kept claims (signed, so spent): a bounded LRU whose entries outlive
  // their request until the TTL; the database's unique key decides after that. A free call never reaches the
  // LRU: its claim is set and deleted in the Map (an LRU delete with TTL costs ~4% of the relay's CPU).
  const inFlight = new Map<string, Entry>();
  const kept = new LRUCache<string, Entry>({ max: opts.max ?? 100_000, ttl: opts.ttlMs ?? 10 * 60_000 });
  const key = (u: string, r: string) => `${u}\u0000${r}`;
  return {
    tryClaim(owner, requestId) {
      const k = key(owner, requestId);
      const existing = cacheLookup('router_claims', inFlight.get(k) ?? kept.get(k));
      if (existing !== undefined) return { type: 'held', paymentId: known(existing) };
      inFlight.set(k, { paymentId: undefined, settled: false, waiters: undefined });
      return { type: 'claimed' };
    },
    assign(owner, requestId, paymentId) {
      const k = key(owner, requestId);
      const e = inFlight.get(k) ?? kept.get(k);
      if (e === undefined) return;
      e.paymentId = paymentId;
      settle(e, paymentId);
      // Spent: from now on the claim outlives the request.
      inFlight.delete(k);
      kept.set(k, e);
    },
    release(owner, requestId) {
      const k = key(owner, requestId);
      let e = inFlight.get(k);
      if (e !== undefined) inFlight.delete(k);
      else {
        e = kept.get(k);
        if (e === undefined) return;
        kept.delete(k);
      }
      settle(e, undefined);
    },
  };
}
