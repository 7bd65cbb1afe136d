// A background task of a process (the WAL checkpointer, the fee sweep): run every `intervalMs`, never two runs at
// once (a slow run skips the ticks it overlaps), never keeping the process alive. Failures are the task's to log.
import type { Logger } from './log.js';

/** Starts `task`; returns the function that stops it. */
export function startPeriodic(intervalMs: number, task: () => Promise<void>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task().finally(() => {
      running = false;
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A periodic purge: `purge` deletes what is past keeping and resolves with how many rows it deleted; a run that
 * deleted something is logged as `what`, a failure as a warning (the next run tries again).
 */
export function startPurge(
  log: Pick<Logger, 'info' | 'warn'>,
  what: string,
  intervalMs: number,
  purge: () => Promise<number>,
): () => void {
  return startPeriodic(intervalMs, () =>
    purge()
      .then((n) => {
        if (n > 0) log.info({ purged: n }, `purged ${what}`);
      })
      .catch((err: unknown) =>
        log.warn({ err: err instanceof Error ? err.message : String(err) }, `purge of ${what} failed`),
      ),
  );
}
