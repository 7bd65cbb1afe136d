// A background task of a process (the WAL checkpointer, the fee sweep): run every `intervalMs`, never two runs at
// once (a slow run skips the ticks it overlaps), never keeping the process alive. Failures are the task's to log.

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
