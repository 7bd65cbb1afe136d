import type { Middleware } from 'koa';
import type { Authenticator } from '../../shared/accounts/api-keys.js';
import type { AdminState } from '../http/state.js';

/**
 * Every /api/v1 path requires `Authorization: Bearer <API key>` (interface "Authentication" 1-2), whether or
 * not a route matches, so an unauthenticated caller learns nothing about which routes exist.
 */
export function authenticate(auth: Authenticator, prefix = '/api/v1'): Middleware<AdminState> {
  return async (ctx, next) => {
    if (ctx.path === prefix || ctx.path.startsWith(`${prefix}/`)) {
      ctx.state.principal = await auth.authenticate(ctx.get('authorization') || undefined);
    }
    await next();
  };
}
