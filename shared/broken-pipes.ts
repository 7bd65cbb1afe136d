/** Errors of a write to a pipe or channel whose reader has gone. */
const GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_IPC_CHANNEL_CLOSED']);

/** Whether `err` says the other end of a pipe or IPC channel has gone (nothing to do but stop writing to it). */
export function isBrokenPipe(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && GONE.has(String(err.code));
}

/**
 * A server must not die because whoever read its output went away: `npm start`'s launcher killed outright, a log
 * collector restarted, `| head`. Node reports a write to such a pipe as an 'error' event on process.stdout or
 * process.stderr, and a failed send on the IPC channel to the parent as an 'error' event on `process`; unheard,
 * each is an uncaught exception that ends the process, and with it the calls it serves. What was being written is
 * lost (there is no one to read it); any other error stays fatal. pino's destination handles its own broken pipe.
 */
export function surviveBrokenPipes(): void {
  const ignoreGone = (err: unknown): void => {
    if (!isBrokenPipe(err)) throw err;
  };
  process.stdout.on('error', ignoreGone);
  process.stderr.on('error', ignoreGone);
  if (process.send !== undefined) process.on('error', ignoreGone);
}
