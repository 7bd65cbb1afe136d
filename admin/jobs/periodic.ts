// A background task of a process (the WAL checkpointer, the fee sweep): run every `intervalMs`, never two runs at
// once (a slow run skips the ticks it overlaps), never keeping the process alive. Failures are the task's to log.
import type { Logger } from '../../shared/log.js';

/** Stops a periodic task: no further run starts; resolves once a run in progress has finished (its transaction
 *  committed or rolled back), so the database can be closed after it. */
export type StopPeriodic = () => Promise<void>;

/** Starts `task`; returns the function that stops it. */
export function startPeriodic(intervalMs: number, task: () => Promise<void>): StopPeriodic {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running !== undefined) return;
    running = task().finally(() => {
      running = undefined;
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running?.catch(() => undefined);
  };
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
): StopPeriodic {
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
