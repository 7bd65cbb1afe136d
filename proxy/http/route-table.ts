// A minimal method + path table for the proxy's own routes: no framework on the hot path (DESIGN §1).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../../shared/accounts/api-keys.js';
import type { RequestTarget } from './request-target.js';

export interface RouterRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path, and the parsed URL on demand (query parameters). */
  readonly target: RequestTarget;
  readonly correlationId: string;
  readonly principal: Principal;
  /** Path parameters captured by `:name` segments. */
  readonly params: Record<string, string>;
}

export type RouteHandler = (r: RouterRequest) => Promise<void>;

interface Route {
  method: string | '*';
  parts: string[];
  handler: RouteHandler;
}

export class RouteTable {
  readonly #routes: Route[] = [];

  add(method: string | '*', path: string, handler: RouteHandler): this {
    this.#routes.push({ method, parts: path.split('/').filter(Boolean), handler });
    return this;
  }

  /**
   * `undefined` when no route matches the path; `{ allow }` when the path matches with other methods only (the
   * 405's Allow header, RFC 9110 §15.5.6). HEAD runs a GET route: Node's ServerResponse sends no body for it.
   */
  match(
    method: string,
    path: string,
  ): { handler: RouteHandler; params: Record<string, string> } | { allow: string[] } | undefined {
    const parts = path.split('/').filter(Boolean);
    const allow = new Set<string>();
    for (const route of this.#routes) {
      if (route.parts.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const want = route.parts[i] ?? '';
        const got = parts[i] ?? '';
        if (want.startsWith(':')) {
          try {
            params[want.slice(1)] = decodeURIComponent(got);
          } catch {
            ok = false;
            break;
          }
        } else if (want !== got) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (route.method === '*' || route.method === method || (method === 'HEAD' && route.method === 'GET'))
        return { handler: route.handler, params };
      allow.add(route.method);
      if (route.method === 'GET') allow.add('HEAD');
    }
    return allow.size > 0 ? { allow: [...allow].sort() } : undefined;
  }
}
