// Who is calling. One tagged union for every kind of credential, built only by the credential resolver
// (credential-resolver.ts): a route states which kinds it accepts (route-access.ts) and receives exactly those.

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

/** Every kind of authenticated caller; a new credential kind is one more member here. */
export type Caller = ApiKeyCaller;

export type CallerKind = Caller['kind'];

/** The members of the union a list of kinds admits. */
export type CallerOf<K extends CallerKind> = Extract<Caller, { readonly kind: K }>;
