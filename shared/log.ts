import { pino, type Logger } from 'pino';
import type { Config } from '../config/index.js';

export type { Logger };

/**
 * Logs go to stderr (or LOG_FILE), never stdout: the CLI prints exactly one JSON object on stdout.
 * Secrets are redacted by path as a second line of defence; code never logs them in the first place.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_FILE'>, name: string): Logger {
  const destination = pino.destination({ dest: config.LOG_FILE ?? 2, sync: false, mkdir: true });
  return pino(
    {
      name,
      level: config.LOG_LEVEL,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.privateKey', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
