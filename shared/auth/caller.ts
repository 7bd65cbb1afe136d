// Who is calling. One tagged union for every kind of credential, built only by the credential resolver
// (credential-resolver.ts): a route states which kinds it accepts (route-callers.ts) and receives exactly those.
/** The user a call acts for: all that services acting on the user's own objects and wallet need. */
export interface ActingUser {
  readonly userId: string;
  /** The user's custodial buyer wallet: it pays orders and router payments and holds the credits it buys. */
  readonly walletAddress: string;
}

/** A caller holding one of the user's API keys. */
export interface ApiKeyCaller extends ActingUser {
  readonly kind: 'apiKey';
  readonly apiKeyId: string;
  readonly email: string;
}

/**
 * A connector holding an OAuth access token of one of the user's grants (RFC 9068 JWT): it acts for the user only
 * within the grant's consent type, which is its kind, and its delegation's cap.
 */
interface GrantCaller extends ActingUser {
  readonly clientId: string;
  readonly grantId: string;
  /** The delegation created with the grant: the only one the connector may spend against. */
  readonly delegationId: string;
}

/** A `commerce` grant: pays merchants through /router/commerce/route within its erc4337 delegation. */
export interface CommerceCaller extends GrantCaller {
  readonly kind: 'commerce';
}

/** An `account_access` grant: registry and credits reads, plan orders and x402 permissions on its card mandate. */
export interface AccountAccessCaller extends GrantCaller {
  readonly kind: 'account_access';
}

export type OAuthCaller = CommerceCaller | AccountAccessCaller;

/** Every kind of authenticated caller; a new credential kind is one more member here. */
export type Caller = ApiKeyCaller | OAuthCaller;

export type CallerKind = Caller['kind'];

/** The members of the union a list of kinds admits. */
export type CallerOf<K extends CallerKind> = Extract<Caller, { readonly kind: K }>;

/** True for a connector's token, whatever its consent type. */
export function isOAuthCaller(caller: Caller): caller is OAuthCaller {
  return caller.kind === 'commerce' || caller.kind === 'account_access';
}
