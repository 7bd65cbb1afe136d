// Every wait of a test has a bound, so a stuck test fails by itself, naming what it waited for, instead of holding
// the run until the run's own timeout (which names the test, not the wait).

/** Generous: a loaded 2-core machine is slow, never this slow. */
export const WAIT_LIMIT_MS = 120_000;

/** `promise`, or a rejection naming `what` once `ms` passed without it settling. */
export function within<T>(what: string, promise: Promise<T>, ms = WAIT_LIMIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
