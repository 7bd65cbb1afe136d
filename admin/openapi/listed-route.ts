// A route as the API description sees it: what both processes' route tables declare (method, path, who may call,
// idempotency, the protocol its errors speak), with no HTTP framework attached, so the document is built from the
// tables themselves and lists exactly their routes.
import type { RouteCallers } from '../../shared/auth/route-callers.js';

/** How a route answers its errors: the BCK envelope, RFC 6749's `{error, error_description}`, or an HTML page. */
export type ErrorDialect = 'envelope' | 'oauth' | 'page';

export interface ListedRoute {
  readonly process: 'admin' | 'proxy';
  /** `*` is any method (the proxy's streaming routes). */
  readonly method: string;
  /** The table's template: `:name` segments are path parameters. */
  readonly path: string;
  readonly access: Pick<RouteCallers<unknown>, 'public' | 'accepts' | 'refusal' | 'unauthenticated'>;
  /** An `Idempotency-Key` header makes a retry replay the first answer. */
  readonly idempotent: boolean;
  readonly errors: ErrorDialect;
  /** What its body may be: JSON, or also a form (`application/x-www-form-urlencoded`). */
  readonly bodies: 'json' | 'form-or-json';
}

/** `METHOD template`, the key of the operation registry (the route tables' own spelling). */
export const routeKey = (r: Pick<ListedRoute, 'method' | 'path'>): string => `${r.method} ${r.path}`;
