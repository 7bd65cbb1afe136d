// The admin routes as declarations, one line each (method, path, who may call, handler): readable, and enumerable
// so a test can check every route's access. A route authorizes its caller as its first step, before anything of
// the request is read.
import type { RouterContext } from '@koa/router';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import type { RouteAccess } from '../../shared/auth/route-access.js';
import type { AdminState } from './state.js';

export type AdminRouterContext = RouterContext<AdminState>;

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What a route takes from its process when it runs. */
export interface RouteRuntime {
  readonly credentials: CredentialResolver;
  /** Parses the JSON body onto ctx.request.body (size-limited; 400 / 413 / 415). */
  readBody(ctx: AdminRouterContext): Promise<void>;
}

/** A handler receives the caller its route's declaration admitted (nothing for a public route). */
export type AdminHandler<C> = (ctx: AdminRouterContext, caller: C) => Promise<void>;

export interface AdminRoute {
  readonly method: Method;
  readonly path: string;
  readonly access: RouteAccess<unknown>;
  run(ctx: AdminRouterContext, runtime: RouteRuntime): Promise<void>;
}

function route<C>(method: Method, path: string, access: RouteAccess<C>, handler: AdminHandler<C>): AdminRoute {
  return {
    method,
    path,
    access,
    async run(ctx, runtime) {
      // Authorization before the body: an unauthenticated caller costs no JSON parsing.
      const caller = await access.authorize(runtime.credentials, ctx.get('authorization') || undefined);
      await runtime.readBody(ctx);
      await handler(ctx, caller);
    },
  };
}

export const get = <C>(path: string, access: RouteAccess<C>, handler: AdminHandler<C>): AdminRoute =>
  route('GET', path, access, handler);
export const post = <C>(path: string, access: RouteAccess<C>, handler: AdminHandler<C>): AdminRoute =>
  route('POST', path, access, handler);
export const put = <C>(path: string, access: RouteAccess<C>, handler: AdminHandler<C>): AdminRoute =>
  route('PUT', path, access, handler);
export const del = <C>(path: string, access: RouteAccess<C>, handler: AdminHandler<C>): AdminRoute =>
  route('DELETE', path, access, handler);

/** The same routes under a path prefix (the API's `/api/v1`). */
export function underPrefix(prefix: string, routes: readonly AdminRoute[]): AdminRoute[] {
  return routes.map((r) => ({ ...r, path: `${prefix}${r.path}` }));
}
