// Per-user concurrency limit of router calls (ROUTER_MAX_CONCURRENT_PER_USER, router flow step 2 in docs/architecture.md).
export interface ConcurrencyLimiter {
  /** A release function, or undefined when the user is at the limit (429 BCK.ROUTER.0007). */
  acquire(userId: string): (() => void) | undefined;
}

export interface LimiterOptions {
  /**
   * Longest a call can hold a slot by construction (every wait on its path is bounded: the body, the merchant, the
   * database). A slot still held past it belongs to a call that can no longer end, which is a bug; it is taken back,
   * so that bug costs the user one slot for this long, never the router for good (once a database that stopped
   * answering held every slot of a user for 22 minutes). Unset: never.
   */
  readonly maxHoldMs?: number | undefined;
  /** Called with the user whose slot was taken back (the process logs it: it should never happen). */
  readonly onReclaim?: ((userId: string) => void) | undefined;
  readonly now?: (() => number) | undefined;
}

export function createConcurrencyLimiter(limit: number, opts: LimiterOptions = {}): ConcurrencyLimiter {
  const now = opts.now ?? Date.now;
  const maxHoldMs = opts.maxHoldMs;
  // Per user, the time each slot in use was taken, by slot number.
  const held = new Map<string, Map<number, number>>();
  let next = 0;

  /** Takes back the user's slots held past maxHoldMs; looked at only when the user is at the limit. */
  const reclaim = (userId: string, slots: Map<number, number>): void => {
    if (maxHoldMs === undefined) return;
    const oldest = now() - maxHoldMs;
    for (const [slot, since] of slots) {
      if (since > oldest) continue;
      slots.delete(slot);
      opts.onReclaim?.(userId);
    }
  };

  return {
    acquire(userId) {
      let slots = held.get(userId);
      if (slots === undefined) {
        slots = new Map();
        held.set(userId, slots);
      } else if (slots.size >= limit) {
        reclaim(userId, slots);
        if (slots.size >= limit) return undefined;
      }
      const slot = next++;
      slots.set(slot, now());
      const mine = slots;
      return () => {
        // Once: a second call, or a call after the slot was taken back, gives nothing back.
        if (!mine.delete(slot)) return;
        if (mine.size === 0 && held.get(userId) === mine) held.delete(userId);
      };
    },
  };
}
