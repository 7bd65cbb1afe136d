// Who may call a route: every route of both processes declares it, and the declaration itself enforces it (the
// one place), as the route's first step. Deciding by route rather than by path prefix means no spelling of a path
// (case, slashes, escapes) can reach a handler that the declaration did not admit.
import { AppError } from '../errors/app-error.js';
import { type Caller, type CallerKind, type CallerOf, type CommerceCaller, isOAuthCaller } from './caller.js';
import type { CredentialResolver } from './credential-resolver.js';

/** A route's declaration; `C` is what its handler receives: the admitted caller, or nothing on a public route. */
export interface RouteCallers<C> {
  /** Anyone may call it; no credential is read. */
  readonly public: boolean;
  /** The caller kinds it admits (none for a public route). */
  readonly accepts: readonly CallerKind[];
  /** The code a caller of another kind is refused with (403): BCK.AUTH.0002, or BCK.OAUTH.0030 for an OAuth token,
   * unless the route names one code for every other kind. */
  readonly refusal?: 'BCK.OAUTH.0031';
  /** The code a missing or invalid credential is refused with (401), when not BCK.AUTH.0001. */
  readonly unauthenticated?: 'BCK.OAUTH.0007';
  /** Resolves and admits the caller: 401 BCK.AUTH.0001 without a valid credential, 403 BCK.AUTH.0002 for a kind
   * the route refuses. */
  authorize(credentials: CredentialResolver, authorization: string | undefined): Promise<C>;
}

/** Discovery and health: no credential. */
export const PUBLIC: RouteCallers<undefined> = {
  public: true,
  accepts: [],
  authorize: async () => undefined,
};

function isOneOf<K extends CallerKind>(caller: Caller, kinds: readonly K[]): caller is CallerOf<K> {
  const admitted: readonly CallerKind[] = kinds;
  return admitted.includes(caller.kind);
}

/** A route for callers of the given kinds; the handler's caller is typed to exactly those. */
export function accepts<K extends CallerKind>(...kinds: [K, ...K[]]): RouteCallers<CallerOf<K>> {
  const list: readonly K[] = Object.freeze([...kinds]);
  return {
    public: false,
    accepts: list,
    async authorize(credentials, authorization) {
      const caller = await credentials.resolve(authorization);
      if (isOneOf(caller, list)) return caller;
      // A connector's token on a route that does not take it (the user's own routes: keys, grants, the router's
      // other modes): one refusal code, so a connector can tell "not with this credential" from "not allowed".
      if (isOAuthCaller(caller)) {
        throw new AppError('BCK.OAUTH.0030', {
          details: `this route does not accept OAuth access tokens of consent type ${caller.kind}`,
          params: {
            consentType: caller.kind,
          },
        });
      }
      throw new AppError('BCK.AUTH.0002', {
        details: `a credential of kind ${caller.kind} cannot call this route`,
        params: {
          kind: caller.kind,
          accepts: list,
        },
      });
    },
  };
}

/**
 * The commerce route: only an access token of a `commerce` grant. Every other credential, the user's own API key
 * included, is 403 BCK.OAUTH.0031, so a connector learns it needs the user's commerce consent, not another key.
 */
export const COMMERCE_ONLY: RouteCallers<CommerceCaller> = {
  public: false,
  accepts: Object.freeze(['commerce'] as const),
  refusal: 'BCK.OAUTH.0031',
  async authorize(credentials, authorization) {
    const caller = await credentials.resolve(authorization);
    if (caller.kind === 'commerce') return caller;
    throw new AppError('BCK.OAUTH.0031', {
      details: 'this route needs an OAuth commerce credential',
      params: { kind: caller.kind },
    });
  },
};

/**
 * The MCP endpoint: only an OAuth access token issued for `{host_url}/mcp` (RFC 8707), of a `commerce` grant; any
 * other credential, a token for the API or an API key included, is 401 with /mcp's challenge (the resolver's).
 */
export const MCP_COMMERCE: RouteCallers<CommerceCaller> = {
  public: false,
  accepts: Object.freeze(['commerce'] as const),
  refusal: 'BCK.OAUTH.0031',
  async authorize(credentials, authorization) {
    const caller = await credentials.resolve(authorization, 'mcp');
    if (caller.kind === 'commerce') return caller;
    throw new AppError('BCK.OAUTH.0031', {
      details: 'the MCP endpoint needs an OAuth commerce credential',
      params: { kind: caller.kind },
    });
  },
};

/** Routes that act for a user through one of the user's API keys. */
export const API_KEY = accepts('apiKey');

/** The router's ledger reads: the user's API key (every payment), or a commerce token (its own grant's). */
export const API_KEY_OR_COMMERCE = accepts('apiKey', 'commerce');

/** Routes a connector with `account_access` consent may call for the user: registry and credits reads, orders
 * paid from the grant's card mandate, card-delegation x402 permissions on the grant's delegation. */
export const API_KEY_OR_ACCOUNT_ACCESS = accepts('apiKey', 'account_access');

/**
 * The same admission, but a missing or invalid credential is reported with `code` (same status, same challenge):
 * the OAuth endpoints that act for the signed-in human say BCK.OAUTH.0007, as connectors written for the hosted
 * service expect.
 */
export function unauthenticatedAs<C>(access: RouteCallers<C>, code: 'BCK.OAUTH.0007'): RouteCallers<C> {
  return {
    public: access.public,
    accepts: access.accepts,
    unauthenticated: code,
    async authorize(credentials, authorization) {
      try {
        return await access.authorize(credentials, authorization);
      } catch (err) {
        if (err instanceof AppError && err.code === 'BCK.AUTH.0001') {
          throw new AppError(code, {
            details: err.details,
            params: err.params,
            extra: err.extra,
            headers: err.headers,
          });
        }
        throw err;
      }
    },
  };
}

/** The human who consents, by one of their API keys (401 BCK.OAUTH.0007 without one). */
export const HUMAN_API_KEY = unauthenticatedAs(API_KEY, 'BCK.OAUTH.0007');
