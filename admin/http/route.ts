// The admin routes as declarations, one line each (method, path, who may call, handler): readable, and enumerable
// so a test can check every route's access. A route authorizes its caller as its first step, before anything of
// the request is read.
import { type Caller, isOAuthCaller } from '../../shared/auth/caller.js';
import type { CredentialResolver } from '../../shared/auth/credential-resolver.js';
import type { RouteCallers } from '../../shared/auth/route-callers.js';
import type { IdempotencyRunner } from './idempotent.js';
import type { AdminRouterContext } from './state.js';

export type { AdminRouterContext };

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The bodies a route reads: JSON, or also a form (`application/x-www-form-urlencoded`, RFC 6749's endpoints and
 *  the pages' forms). */
export type BodyKind = 'json' | 'form-or-json';

/**
 * A route that speaks a protocol of its own (RFC 6749's token endpoint, the pages): its body kind, and the writer
 * of its errors, the protocol's one catch point. `writeError` returns false for what it leaves to the process's
 * catch point (the BCK envelope).
 */
export interface RouteProtocol {
  readonly body: BodyKind;
  writeError(ctx: AdminRouterContext, err: unknown): boolean;
}

/** What a route takes from its process when it runs. */
export interface RouteRuntime {
  readonly credentials: CredentialResolver;
  /** Parses the body onto ctx.request.body (size-limited; 400 / 408 / 413 / 415). */
  readBody(ctx: AdminRouterContext, kind: BodyKind): Promise<void>;
  /** Runs an idempotent route's handler under its Idempotency-Key (admin/http/idempotent.ts). */
  readonly idempotency: IdempotencyRunner;
}

/** A handler receives the caller its route's declaration admitted (nothing for a public route). */
export type AdminHandler<C> = (ctx: AdminRouterContext, caller: C) => Promise<void>;

export interface AdminRoute {
  readonly method: Method;
  readonly path: string;
  readonly access: RouteCallers<unknown>;
  /** Declared with `idempotent(...)`: an Idempotency-Key header makes a retry replay the first answer. */
  readonly idempotent: boolean;
  /** Declared with `speaking(...)`: the protocol whose body kind and error format the route uses. */
  readonly protocol?: RouteProtocol | undefined;
  run(ctx: AdminRouterContext, runtime: RouteRuntime): Promise<void>;
  /** The same route under a path prefix (its idempotency scope is the full pattern). */
  under(prefix: string): AdminRoute;
}

/** A route as declared, its caller type still known: what `idempotent` needs to see it acts for a user. */
export interface DeclaredRoute<C> extends AdminRoute {
  readonly access: RouteCallers<C>;
  readonly handler: AdminHandler<C>;
}

interface Spec<C> {
  readonly method: Method;
  readonly path: string;
  readonly access: RouteCallers<C>;
  readonly handler: AdminHandler<C>;
  readonly protocol?: RouteProtocol | undefined;
}

/** Whose Idempotency-Keys a caller uses: the user's, and within the user, the credential's key scope. */
interface KeyOwner {
  readonly userId: string;
  /** '' for the user's API keys (they share their keys), a grant's id for a connector. */
  readonly credential: string;
}

/** `keyOwnerOf` set: the route is idempotent, keyed by that owner. */
function build<C>(spec: Spec<C>, keyOwnerOf?: (caller: C) => KeyOwner): DeclaredRoute<C> {
  const { method, path, access, handler, protocol } = spec;
  const steps = async (ctx: AdminRouterContext, runtime: RouteRuntime): Promise<void> => {
    // Authorization before the body: an unauthenticated caller costs no body parsing.
    const caller = await access.authorize(runtime.credentials, ctx.get('authorization') || undefined);
    await runtime.readBody(ctx, protocol?.body ?? 'json');
    if (keyOwnerOf === undefined) return handler(ctx, caller);
    const owner = keyOwnerOf(caller);
    // A connector's keys are its grant's own: a replay must never hand it an answer given to the user's key or to
    // another connector of the user (an x402 access token, an order paid from the wallet), nor theirs to it.
    const keyScope = owner.credential === '' ? `${method} ${path}` : `${method} ${path} grant:${owner.credential}`;
    const scope = { scope: keyScope, method, route: path, userId: owner.userId };
    await runtime.idempotency.run(ctx, scope, () => handler(ctx, caller));
  };
  return {
    method,
    path,
    access,
    handler,
    protocol,
    idempotent: keyOwnerOf !== undefined,
    async run(ctx, runtime) {
      if (protocol === undefined) return steps(ctx, runtime);
      try {
        await steps(ctx, runtime);
      } catch (err) {
        if (!protocol.writeError(ctx, err)) throw err;
      }
    },
    under: (prefix) => build({ ...spec, path: `${prefix}${path}` }, keyOwnerOf),
  };
}

const route = <C>(method: Method, path: string, access: RouteCallers<C>, handler: AdminHandler<C>): DeclaredRoute<C> =>
  build({ method, path, access, handler });

export const get = <C>(path: string, access: RouteCallers<C>, handler: AdminHandler<C>): DeclaredRoute<C> =>
  route('GET', path, access, handler);
export const post = <C>(path: string, access: RouteCallers<C>, handler: AdminHandler<C>): DeclaredRoute<C> =>
  route('POST', path, access, handler);
export const put = <C>(path: string, access: RouteCallers<C>, handler: AdminHandler<C>): DeclaredRoute<C> =>
  route('PUT', path, access, handler);
export const patch = <C>(path: string, access: RouteCallers<C>, handler: AdminHandler<C>): DeclaredRoute<C> =>
  route('PATCH', path, access, handler);
export const del = <C>(path: string, access: RouteCallers<C>, handler: AdminHandler<C>): DeclaredRoute<C> =>
  route('DELETE', path, access, handler);

/**
 * A money-moving route made safe to retry (README "Idempotent requests"): with an Idempotency-Key header, the
 * first request with that key runs and its answer (2xx or 4xx) is stored; a repeat gets it back with
 * `Idempotent-Replayed: true` instead of a second effect. Keyed by the acting user (a connector: by its grant within
 * the user), so only routes for a user.
 */
export const idempotent = <C extends Caller>(r: DeclaredRoute<C>): DeclaredRoute<C> =>
  build({ ...r }, (caller) => ({ userId: caller.userId, credential: isOAuthCaller(caller) ? caller.grantId : '' }));

/** The route speaking `protocol`: its body kind and its own error format. */
export const speaking = <C>(protocol: RouteProtocol, r: DeclaredRoute<C>): DeclaredRoute<C> =>
  build({ ...r, protocol });

/** The same routes under a path prefix (the API's `/api/v1`). */
export function underPrefix(prefix: string, routes: readonly AdminRoute[]): AdminRoute[] {
  return routes.map((r) => r.under(prefix));
}
