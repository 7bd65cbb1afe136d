import type { Middleware } from 'koa';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import { AppError } from '../../shared/errors/app-error.js';
import { isAmbiguousPath, rawPathOf } from '../../shared/request-path.js';
import type { AdminState } from '../http/state.js';
import { API_PATH } from './unmatched.js';

/**
 * Before any route: a path with a dot segment, a backslash or an encoded separator is no route, nor is a path Koa
 * reads otherwise than as sent (its url.parse fallback, taken on a fragment or an absolute-form target, reads `\`
 * as `/`). Not found as any unmatched path is (admin/middleware/unmatched.ts: 401 first under /api/v1), never the
 * route a URL parser would resolve it to; the proxy refuses the same paths (shared/request-path.ts).
 */
export function exactPath(credentials: CredentialResolver): Middleware<AdminState> {
  return async (ctx, next) => {
    const asSent = rawPathOf(ctx.req.url ?? '/');
    if (asSent === ctx.path && !isAmbiguousPath(asSent)) return next();
    const shown = asSent ?? ctx.path;
    if (API_PATH.test(shown) || API_PATH.test(ctx.path))
      await credentials.resolve(ctx.get('authorization') || undefined);
    throw new AppError('BCK.HTTP.0404', { details: `no route for ${ctx.method} ${shown}` });
  };
}
