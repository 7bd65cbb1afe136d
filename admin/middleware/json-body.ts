import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { AppError } from '../../shared/errors/app-error.js';
import type { AdminState } from '../http/state.js';

export interface BodyLimits {
  /** BODY_LIMIT_BYTES: larger bodies are 413. */
  readonly maxBytes: number;
  /** ADMIN_BODY_TIMEOUT_MS: the whole body must arrive within this of the start of its read, else 408. */
  readonly timeoutMs: number;
}

const noop = async (): Promise<void> => undefined;

/**
 * JSON only, size-limited (BODY_LIMIT_BYTES, default 1 MB); parse errors surface as 400, size as 413. A body that
 * stalls or trickles would hold the connection and its buffer for ever (the parser has no time limit of its own):
 * past `timeoutMs` the read is abandoned and the request answered 408 BCK.HTTP.0408 (RFC 9110 §15.5.9) with
 * `Connection: close` (admin/middleware/unread-body.ts), since the rest of the body still stands between this
 * request and the next on the connection.
 */
export function jsonBody(limits: BodyLimits, types: readonly ('json' | 'form')[] = ['json']): Middleware<AdminState> {
  const parse = bodyParser({
    enableTypes: [...types],
    jsonLimit: limits.maxBytes,
    formLimit: limits.maxBytes,
    encoding: 'utf-8',
    onError: (err) => {
      throw err;
    },
  }) as unknown as Middleware<AdminState>;
  const { timeoutMs } = limits;
  return async (ctx, next) => {
    const headers = ctx.req.headers;
    // RFC 9112 §6.3: neither Content-Length nor Transfer-Encoding means no body: nothing to wait for.
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
      await parse(ctx, next);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AppError('BCK.HTTP.0408', {
              details: `the request body did not arrive within ${timeoutMs} ms`,
              params: { timeoutMs },
            }),
          ),
        timeoutMs,
      );
    });
    // The abandoned read settles when the connection closes after the 408; its outcome is no longer anyone's.
    const read = parse(ctx, noop);
    read.catch(() => undefined);
    try {
      await Promise.race([read, expired]);
    } finally {
      clearTimeout(timer);
    }
    await next();
  };
}
