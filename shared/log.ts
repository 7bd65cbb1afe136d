import { type DestinationStream, pino, type Logger } from 'pino';
import type { Config } from '../config/index.js';
import { isBrokenPipe } from './broken-pipes.js';
import { prettyLine } from './log-pretty.js';

export type { Logger };

type LogConfig = Pick<Config, 'LOG_LEVEL' | 'LOG_FILE'> & { readonly LOG_FORMAT?: Config['LOG_FORMAT'] | undefined };

/**
 * LOG_FORMAT, with `auto` (the default) decided by where the lines go: pretty for a person at a terminal, JSON lines
 * for anything else (a file, a pipe, a log collector), which every line must stay parseable for. The terminal that
 * counts is the log's own destination, stderr: stdout carries only the readiness line (or the CLI's one object).
 */
export function logFormatOf(config: Pick<LogConfig, 'LOG_FILE' | 'LOG_FORMAT'>): 'json' | 'pretty' {
  const format = config.LOG_FORMAT ?? 'auto';
  if (format !== 'auto') return format;
  return config.LOG_FILE === undefined && process.stderr.isTTY ? 'pretty' : 'json';
}

/**
 * Logs go to stderr (or LOG_FILE), never stdout: the CLI prints exactly one JSON object on stdout.
 * Secrets are redacted by path as a second line of defence; code never logs them in the first place. Pretty lines
 * are made from the JSON line pino wrote, after redaction, so both formats carry the same fields.
 */
export function createLogger(config: LogConfig, name: string): Logger {
  const destination = pino.destination({ dest: config.LOG_FILE ?? 2, sync: false, mkdir: true });
  const output = trackWrites(destination);
  const options = {
    name,
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.privateKey', '*.secret'],
      censor: '[redacted]',
    },
  };
  // Colours only on a terminal, and never when NO_COLOR asks for none (no-color.org).
  const colour = config.LOG_FILE === undefined && process.stderr.isTTY && (process.env.NO_COLOR ?? '') === '';
  const pretty = logFormatOf(config) === 'pretty';
  const stream: DestinationStream & { flush(cb: (err?: Error) => void): void } = {
    write: (line: string) => output.write(pretty ? prettyLine(line, colour) : line),
    flush: (cb) => destination.flush(cb),
  };
  const logger = pino(options, stream);
  outputs.set(logger, output.settled);
  return logger;
}

type Destination = ReturnType<typeof pino.destination>;

/** Each logger's wait for what its destination was given to be written, or to have failed. */
const outputs = new WeakMap<Logger, () => Promise<void>>();

/**
 * Counts what the asynchronous destination was given and has written. At process.exit, pino has the destination
 * write what it still holds synchronously, and sonic-boom retries that write for ever on any error but EAGAIN: with
 * the reader of stderr gone (EPIPE: the launcher killed outright), a process that logged two lines and exited at
 * once hung in its exit, an orphan for good. Once a write in flight has failed, pino stops the destination
 * (nothing left to retry); exitWhenLogged waits for that, or for everything written.
 */
function trackWrites(destination: Destination): { write(line: string): void; settled(): Promise<void> } {
  let given = 0;
  let written = 0;
  let failed = false;
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    if (failed || written >= given) for (const w of waiters.splice(0)) w();
  };
  destination.on('write', (n: number) => {
    written += n;
    wake();
  });
  // pino's own listener, registered first, ends the destination on EPIPE and emits anything else again, which
  // without this listener was thrown: it still is.
  destination.on('error', (err: unknown) => {
    failed = true;
    wake();
    if (!isBrokenPipe(err)) throw err;
  });
  return {
    write(line) {
      given += Buffer.byteLength(line);
      destination.write(line);
    },
    settled: () =>
      failed || written >= given ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

/**
 * Exits with `code` once what `log` was given is written (or could not be: its reader has gone), within
 * `limitMs`. Every planned exit of a server goes through it: see trackWrites.
 */
export async function exitWhenLogged(log: Logger, code: number, limitMs = 2000): Promise<never> {
  const settled = outputs.get(log);
  if (settled !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)))]);
    clearTimeout(timer);
  }
  process.exit(code);
}
