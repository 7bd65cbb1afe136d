// The one catch point of the admin process (node-oidc-provider's error_handler): AppErrors become the
// envelope; framework errors with a client status map to BCK.HTTP.<status>; anything else is a generic 500. What
// becomes of a body still arriving behind the answer (a 413's, a 408's, a 401's) is decided for every answer alike,
// outside this (admin/middleware/unread-body.ts).
import type { Middleware } from 'koa';
import { AppError, asAppError, toEnvelope } from '../../shared/errors/app-error.js';
import type { AdminState } from '../http/state.js';

/**
 * What an error thrown in a route is on the wire: itself, the BCK.HTTP code of a framework's client error, 503 when
 * the database is unavailable, or 500.
 */
export function classify(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const status = (err as { status?: unknown; statusCode?: unknown }).status;
  if (status === 413) return new AppError('BCK.HTTP.0413', 'request body exceeds the size limit');
  if (status === 415) return new AppError('BCK.HTTP.0415');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('BCK.HTTP.0400', 'request body is not valid JSON');
  }
  return asAppError(err);
}

export function errorHandler(docsUrl: string): Middleware<AdminState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('BCK.HTTP.0404', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const appError = classify(err);
      if (appError.httpStatus >= 500) ctx.state.log.error({ err }, 'unhandled error');
      ctx.status = appError.httpStatus;
      ctx.set(appError.headers);
      ctx.body = toEnvelope(appError, ctx.state.correlationId, docsUrl);
    }
  };
}
