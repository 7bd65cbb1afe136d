// Who may call a route: every route of both processes declares it, and the declaration itself enforces it (the
// one place), as the route's first step. Deciding by route rather than by path prefix means no spelling of a path
// (case, slashes, escapes) can reach a handler that the declaration did not admit.
import { AppError } from '../errors/app-error.js';
import type { Caller, CallerKind, CallerOf } from './caller.js';
import type { CredentialResolver } from './credential-resolver.js';

/** A route's declaration; `C` is what its handler receives: the admitted caller, or nothing on a public route. */
export interface RouteAccess<C> {
  /** Anyone may call it; no credential is read. */
  readonly public: boolean;
  /** The caller kinds it admits (none for a public route). */
  readonly accepts: readonly CallerKind[];
  /** Resolves and admits the caller: 401 BCK.AUTH.0001 without a valid credential, 403 BCK.AUTH.0002 for a kind
   * the route refuses. */
  authorize(credentials: CredentialResolver, authorization: string | undefined): Promise<C>;
}

/** Discovery and health: no credential. */
export const PUBLIC: RouteAccess<undefined> = {
  public: true,
  accepts: [],
  authorize: async () => undefined,
};

function isOneOf<K extends CallerKind>(caller: Caller, kinds: readonly K[]): caller is CallerOf<K> {
  const admitted: readonly CallerKind[] = kinds;
  return admitted.includes(caller.kind);
}

/** A route for callers of the given kinds; the handler's caller is typed to exactly those. */
export function accepts<K extends CallerKind>(...kinds: [K, ...K[]]): RouteAccess<CallerOf<K>> {
  const list: readonly K[] = Object.freeze([...kinds]);
  return {
    public: false,
    accepts: list,
    async authorize(credentials, authorization) {
      const caller = await credentials.resolve(authorization);
      if (isOneOf(caller, list)) return caller;
      throw new AppError('BCK.AUTH.0002', `a credential of kind ${caller.kind} cannot call this route`, {
        kind: caller.kind,
        accepts: list,
      });
    },
  };
}

/** Routes that act for a user through one of the user's API keys. */
export const API_KEY = accepts('apiKey');
