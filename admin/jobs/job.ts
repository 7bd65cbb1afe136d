// A background job of the admin process: what runs, how often. The runner (./runner.ts) schedules every job the
// same way; a job's run logs its own outcome and failures (the next run tries again), so it never rejects.
export interface Job {
  readonly name: string;
  readonly intervalMs: number;
  run(): Promise<void>;
}

/** A failure as the jobs log it: the message only (a node or database error's stack says nothing more here). */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
