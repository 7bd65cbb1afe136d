import { type DestinationStream, pino, type Logger } from 'pino';
import type { Config } from '../config/index.js';
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
  const options = {
    name,
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.privateKey', '*.secret'],
      censor: '[redacted]',
    },
  };
  if (logFormatOf(config) === 'json') return pino(options, destination);
  // Colours only on a terminal, and never when NO_COLOR asks for none (no-color.org).
  const colour = config.LOG_FILE === undefined && process.stderr.isTTY && (process.env.NO_COLOR ?? '') === '';
  const pretty: DestinationStream & { flush(cb: (err?: Error) => void): void } = {
    write: (line: string) => destination.write(prettyLine(line, colour)),
    flush: (cb) => destination.flush(cb),
  };
  return pino(options, pretty);
}
