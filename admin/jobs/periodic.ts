// A background task of the admin process (the WAL checkpointer, the fee sweep): run every `intervalMs`, never two runs at
// once (a slow run skips the ticks it overlaps), never keeping the process alive. Failures are the task's to log.

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
