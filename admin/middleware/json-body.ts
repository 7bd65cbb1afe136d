import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import type { AdminState } from '../http/state.js';

/** JSON only, size-limited (BODY_LIMIT_BYTES, default 1 MB); parse errors surface as 400, size as 413. */
export function jsonBody(limitBytes: number): Middleware<AdminState> {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: limitBytes,
    encoding: 'utf-8',
    onError: (err) => {
      throw err;
    },
  }) as unknown as Middleware<AdminState>;
}
