// The proxy's route table as data: each route's method, path template and access declaration, with no handler.
// The proxy registers one handler per declaration (proxy/routes/) and refuses to start when the two differ; the
// admin's API description lists these declarations without building the router or any of its services.
import { API_KEY, API_KEY_OR_COMMERCE, COMMERCE_ONLY, PUBLIC, type RouteCallers } from '../auth/route-callers.js';

/** `*` is any method (the streaming routes forward the caller's own). */
export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | '*';

/** One route of the proxy; `C` is the caller its access declaration admits (what the handler receives). */
export interface RouteDeclaration<C> {
  readonly method: RouteMethod;
  /** `:name` segments are path parameters. */
  readonly path: string;
  readonly access: RouteCallers<C>;
}

const route = <C>(method: RouteMethod, path: string, access: RouteCallers<C>): RouteDeclaration<C> =>
  Object.freeze({ method, path, access });

/** Every route of the proxy, in the order its table matches them. */
export const PROXY_ROUTES = Object.freeze({
  health: route('GET', '/healthz', PUBLIC),
  ready: route('GET', '/readyz', PUBLIC),
  issueCredential: route('POST', '/api/v1/router/payments', API_KEY),
  route: route('POST', '/api/v1/router/route', API_KEY),
  commerceRoute: route('POST', '/api/v1/router/commerce/route', COMMERCE_ONLY),
  settled: route('POST', '/api/v1/router/payments/:id/settled', API_KEY),
  payments: route('GET', '/api/v1/router/payments', API_KEY_OR_COMMERCE),
  summary: route('GET', '/api/v1/router/payments/summary', API_KEY_OR_COMMERCE),
  // The streaming call, and its two shorter aliases.
  proxy: route('*', '/api/v1/router/proxy', API_KEY),
  proxyAlias: route('*', '/api/v1/proxy', API_KEY),
  proxyShort: route('*', '/proxy', API_KEY),
});

/** The declarations as a list, in table order. */
export const PROXY_ROUTE_LIST: readonly RouteDeclaration<unknown>[] = Object.values(PROXY_ROUTES);
