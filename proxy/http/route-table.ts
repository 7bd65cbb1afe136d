// A minimal method + path table for the proxy's own routes: no framework on the hot path. Each route is one of the
// declarations of shared/router/routes.ts with its handler, and authorizes its caller by the declaration's access
// (shared/auth/route-callers.ts) before its handler runs.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import type { RouteDeclaration } from '../../shared/router/routes.js';
import type { RequestTarget } from './request-target.js';

/** What a route tells the request log about its request; the line is written once the request finished. */
export interface RequestFacts {
  /** The router payment the request made or named, if any. */
  paymentId: string | undefined;
}

/** A request as the table hands it to a route, before its caller is known. */
export interface RouteInput {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path, and the parsed URL on demand (query parameters). */
  readonly target: RequestTarget;
  readonly correlationId: string;
  /** Path parameters captured by `:name` segments. */
  readonly params: Record<string, string>;
  readonly facts: RequestFacts;
}

/** What a handler receives: the request and the caller its declaration admitted (nothing on a public route). */
export interface RouterRequest<C> extends RouteInput {
  readonly caller: C;
}

export type RouteHandler<C> = (r: RouterRequest<C>) => Promise<void>;

export interface Route extends RouteDeclaration<unknown> {
  /** The declaration it serves (the table is checked against the declared list by identity). */
  readonly declaration: RouteDeclaration<unknown>;
  /** Authorizes the caller (the declaration), then runs the handler. */
  serve(input: RouteInput, credentials: CredentialResolver): Promise<void>;
}

interface Entry {
  readonly route: Route;
  readonly parts: readonly string[];
}

export type RouteMatch =
  | { readonly type: 'route'; readonly route: Route; readonly params: Record<string, string> }
  /** The path is a route for other methods only (the 405's Allow header, RFC 9110 §15.5.6); `public` when every
   * route at that path is. */
  | { readonly type: 'method-not-allowed'; readonly allow: readonly string[]; readonly public: boolean }
  | { readonly type: 'not-found' };

/**
 * Paths match exactly, segment by segment, as the admin's router does: letter case counts, an empty segment (`//`)
 * is a segment, and a trailing slash makes a different path. So a route has one spelling, and every other
 * spelling is unmatched. `:name` segments match one non-empty segment, percent-decoded.
 */
export class RouteTable {
  readonly #entries: Entry[] = [];

  add<C>(declaration: RouteDeclaration<C>, handler: RouteHandler<C>): this {
    const { method, path, access } = declaration;
    const route: Route = {
      method,
      path,
      access,
      declaration,
      async serve(input, credentials) {
        const caller = await access.authorize(credentials, input.req.headers.authorization);
        await handler({ ...input, caller });
      },
    };
    this.#entries.push({ route, parts: path.split('/') });
    return this;
  }

  /** Every route, in the order they were added. */
  routes(): readonly Route[] {
    return this.#entries.map((e) => e.route);
  }

  /** HEAD runs a GET route: Node's ServerResponse sends no body for it. */
  match(method: string, path: string): RouteMatch {
    const parts = path.split('/');
    const allow = new Set<string>();
    let allPublic = true;
    for (const { route, parts: want } of this.#entries) {
      const params = paramsOf(want, parts);
      if (params === undefined) continue;
      if (route.method === '*' || route.method === method || (method === 'HEAD' && route.method === 'GET'))
        return { type: 'route', route, params };
      allow.add(route.method);
      if (route.method === 'GET') allow.add('HEAD');
      allPublic &&= route.access.public;
    }
    if (allow.size === 0) return { type: 'not-found' };
    return { type: 'method-not-allowed', allow: [...allow].sort(), public: allPublic };
  }
}

/** The `:name` parameters when `got` is a spelling of the route `want`, else undefined. */
function paramsOf(want: readonly string[], got: readonly string[]): Record<string, string> | undefined {
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (!w.startsWith(':')) {
      if (w !== g) return undefined;
      continue;
    }
    if (g === '') return undefined;
    try {
      params[w.slice(1)] = decodeURIComponent(g);
    } catch {
      return undefined;
    }
  }
  return params;
}
