// The one catch point of the admin process (node-oidc-provider's error_handler): AppErrors become the
// envelope; framework errors with a client status map to BCK.HTTP.<status>; anything else is a generic 500. What
// becomes of a body still arriving behind the answer (a 413's, a 408's, a 401's) is decided for every answer alike,
// outside this (admin/middleware/unread-body.ts).
import type { Middleware } from 'koa';
import { AppError, asAppError, toEnvelope } from '../../shared/errors/app-error.js';
import type { ErrorCode } from '../../shared/errors/catalogue.js';
import type { AdminState } from '../http/state.js';

/**
 * The client errors the body parser (raw-body, co-body) raises, by their `type`, as what the caller is told. A
 * framework 4xx of a type not listed keeps its status class: 400 with the framework's own wording, never a guess.
 */
const FRAMEWORK_ERRORS: Readonly<Record<string, { readonly code: ErrorCode; readonly details: string }>> = {
  'entity.parse.failed': { code: 'BCK.HTTP.0400', details: 'request body is not valid JSON' },
  'entity.too.large': { code: 'BCK.HTTP.0413', details: 'request body exceeds the size limit' },
  'parameters.too.many': { code: 'BCK.HTTP.0413', details: 'request body has too many form parameters' },
  'request.size.invalid': {
    code: 'BCK.HTTP.0400',
    details: 'request body length does not match its Content-Length',
  },
  'request.aborted': { code: 'BCK.HTTP.0400', details: 'the client aborted the request body' },
  'encoding.unsupported': { code: 'BCK.HTTP.0415', details: 'unsupported charset' },
  'charset.unsupported': { code: 'BCK.HTTP.0415', details: 'unsupported charset' },
};

/**
 * What an error thrown in a route is on the wire: itself, the BCK.HTTP code of a framework's client error (named
 * by its type), 503 when the database is unavailable, or 500.
 */
export function classify(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const { status, type, expose, message } = err as {
    status?: unknown;
    type?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  const known = typeof type === 'string' ? FRAMEWORK_ERRORS[type] : undefined;
  if (known !== undefined) return new AppError(known.code, { details: known.details, cause: err });
  // co-body marks a body it read but could not parse with status 400 and the text it read (`body`).
  if (status === 400 && typeof err === 'object' && err !== null && 'body' in err) {
    const details = err instanceof SyntaxError ? 'request body is not valid JSON' : 'request body is not a valid form';
    return new AppError('BCK.HTTP.0400', { details, cause: err });
  }
  if (status === 413)
    return new AppError('BCK.HTTP.0413', { details: 'request body exceeds the size limit', cause: err });
  // inflation (the decompressing step before raw-body) raises a bare 415 for a Content-Encoding it cannot undo.
  if (status === 415) return new AppError('BCK.HTTP.0415', { details: 'unsupported Content-Encoding', cause: err });
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // http-errors marks client errors safe to show (`expose`); anything else gets the generic wording.
    const details = expose === true && typeof message === 'string' ? message : 'the request could not be processed';
    return new AppError('BCK.HTTP.0400', { details, cause: err });
  }
  return asAppError(err);
}

export function errorHandler(docsUrl: string): Middleware<AdminState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('BCK.HTTP.0404', { details: `no route for ${ctx.method} ${ctx.path}` });
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
