// The one catch point of the endpoints that speak RFC 6749 (token), RFC 8628 (device authorization), RFC 7009
// (revocation) and RFC 7591 (dynamic registration): errors are `{ error, error_description }` with the protocol's status, never the BCK envelope
// (a connector's OAuth library reads only the former), and nothing the endpoint answers may be cached.
import { AppError, DATABASE_RETRY_AFTER_SECS } from '../../shared/errors/app-error.js';
import { isDatabaseUnavailable } from '../../shared/errors/database-unavailable.js';
import {
  OAuthProtocolError,
  type ProtocolErrorCode,
  temporarilyUnavailable,
} from '../../shared/oauth/protocol-error.js';
import type { AdminRouterContext, RouteProtocol } from './route.js';

/** RFC 6749 §5.1: token responses carry Cache-Control: no-store (and Pragma: no-cache for HTTP/1.0 caches). */
export function noStore(ctx: AdminRouterContext): void {
  ctx.set('cache-control', 'no-store');
  ctx.set('pragma', 'no-cache');
}

/**
 * A client error of the transport or the body parser, in the protocol's terms (`malformed`: RFC 6749's
 * invalid_request, RFC 7591's invalid_client_metadata); undefined for anything else.
 */
function asProtocolError(err: unknown, malformed: ProtocolErrorCode): OAuthProtocolError | undefined {
  if (err instanceof OAuthProtocolError) return err;
  // A connector's OAuth library reads `error`; the envelope's would be the status text.
  if (isDatabaseUnavailable(err))
    return temporarilyUnavailable('the database is unavailable: retry', 503, DATABASE_RETRY_AFTER_SECS);
  // Size and time limits stay the process's (408 / 413 close the connection): not the protocol's business.
  const status = err instanceof AppError ? err.httpStatus : (err as { status?: unknown }).status;
  if (status === 400 || status === 415) {
    const description =
      err instanceof AppError
        ? err.details
        : status === 415
          ? 'send application/x-www-form-urlencoded or application/json'
          : 'the request body could not be parsed';
    return new OAuthProtocolError(malformed, description);
  }
  return undefined;
}

const protocol = (malformed: ProtocolErrorCode): RouteProtocol => ({
  body: 'form-or-json',
  writeError(ctx, err) {
    const e = asProtocolError(err, malformed);
    if (e === undefined) return false;
    ctx.status = e.status;
    for (const [name, value] of Object.entries(e.headers)) ctx.set(name, value);
    noStore(ctx);
    ctx.body = e.toBody();
    return true;
  },
});

export const OAUTH_PROTOCOL = protocol('invalid_request');
/** RFC 7591 §3.2.2 has no invalid_request: a body that cannot be read is invalid client metadata. */
export const REGISTRATION_PROTOCOL = protocol('invalid_client_metadata');
