// The route tables of both processes as the API description lists them: the admin process's own declarations, and
// the proxy's declarations (shared/router/routes.ts), read as data: no router and no service is built for it.
import { PROXY_ROUTE_LIST } from '../../shared/router/routes.js';
import type { ListedRoute } from './listed-route.js';
import { OAUTH_PROTOCOL, REGISTRATION_PROTOCOL } from '../http/oauth-protocol.js';
import type { AdminRoute } from '../http/route.js';
import { PAGE_PROTOCOL } from '../pages/browser.js';

export function listAdminRoutes(routes: readonly AdminRoute[]): ListedRoute[] {
  return routes.map((r) => ({
    process: 'admin',
    method: r.method,
    path: r.path,
    access: r.access,
    idempotent: r.idempotent,
    errors:
      r.protocol === OAUTH_PROTOCOL || r.protocol === REGISTRATION_PROTOCOL
        ? 'oauth'
        : r.protocol === PAGE_PROTOCOL
          ? 'page'
          : 'envelope',
    bodies: r.protocol?.body ?? 'json',
  }));
}

/** The proxy's declared routes (its table is checked against them when the proxy builds it). Every one answers in
 * the envelope, takes JSON, and has no `Idempotency-Key` replay. */
export function listProxyRoutes(): ListedRoute[] {
  return PROXY_ROUTE_LIST.map((r) => ({
    process: 'proxy',
    method: r.method,
    path: r.path,
    access: r.access,
    idempotent: false,
    errors: 'envelope',
    bodies: 'json',
  }));
}
