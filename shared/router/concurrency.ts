// Per-user concurrency limit of router calls (ROUTER_MAX_CONCURRENT_PER_USER, router flow step 2 in docs/architecture.md).
export interface ConcurrencyLimiter {
  /** A release function, or undefined when the user is at the limit (429 BCK.ROUTER.0007). */
  acquire(userId: string): (() => void) | undefined;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  const inFlight = new Map<string, number>();
  return {
    acquire(userId) {
      const n = inFlight.get(userId) ?? 0;
      if (n >= limit) return undefined;
      inFlight.set(userId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (inFlight.get(userId) ?? 1) - 1;
        if (left <= 0) inFlight.delete(userId);
        else inFlight.set(userId, left);
      };
    },
  };
}
