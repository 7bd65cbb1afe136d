import type { RouterMiddleware } from '@koa/router';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import { AppError } from '../../shared/errors/app-error.js';
import type { AdminState } from '../http/state.js';

/** The API's paths in any letter case: whether a spelling is a route must not be learnt from a 401 either. */
export const API_PATH = /^\/api\/v1(?:\/|$)/i;

/**
 * A request no route takes: 405 with `Allow` (RFC 9110 §15.5.6) when the path is a route for other methods, else
 * 404, both as the error envelope. Under /api/v1 only a valid credential learns which (401 first), so an
 * unauthenticated caller cannot map the API.
 */
export function unmatched(credentials: CredentialResolver): RouterMiddleware<AdminState> {
  return async (ctx) => {
    if (API_PATH.test(ctx.path)) await credentials.resolve(ctx.get('authorization') || undefined);
    const allow = new Set<string>();
    for (const layer of ctx.matched ?? []) for (const method of layer.methods) allow.add(method);
    if (allow.size > 0) {
      ctx.set('allow', [...allow].sort().join(', '));
      throw new AppError('BCK.HTTP.0405', { details: `${ctx.method} is not allowed on ${ctx.path}` });
    }
    throw new AppError('BCK.HTTP.0404', { details: `no route for ${ctx.method} ${ctx.path}` });
  };
}
