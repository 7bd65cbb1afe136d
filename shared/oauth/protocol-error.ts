// The errors of the endpoints that speak RFC 6749 / 8628 / 7009 (token, device authorization, revocation): the
// body is `{ error, error_description }` (RFC 6749 §5.2), not the BCK envelope of the rest of the service. One class,
// one factory per error code, as node-oidc-provider has one error type per OAuth error.

/**
 * Every error code these endpoints answer (RFC 6749 §5.2, RFC 8628 §3.5, RFC 7009 §2.2.1), once; and
 * `temporarily_unavailable` (RFC 6749 §4.1.2.1, registered in §11.4): a rate limit, or the database unavailable;
 * `invalid_target` (RFC 8707 §2): a `resource` this service does not serve; and the dynamic registration
 * endpoint's two (RFC 7591 §3.2.2), whose error body has the same shape.
 */
export const PROTOCOL_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_token_type',
  'invalid_scope',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  'temporarily_unavailable',
  'invalid_target',
  'invalid_redirect_uri',
  'invalid_client_metadata',
] as const;

export type ProtocolErrorCode = (typeof PROTOCOL_ERROR_CODES)[number];

export class OAuthProtocolError extends Error {
  constructor(
    readonly error: ProtocolErrorCode,
    readonly description: string,
    /** 400, except invalid_client: 401 (RFC 6749 §5.2), and a rate limit's 429. */
    readonly status = 400,
    /** Response headers the error needs (Retry-After of a 429). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
    this.name = 'OAuthProtocolError';
  }

  /** The response body (RFC 6749 §5.2). */
  toBody(): { error: ProtocolErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidRequest = (d: string) => new OAuthProtocolError('invalid_request', d);
// RFC 6749 §5.2: a public client that is unknown or disabled fails client authentication: 401.
export const invalidClient = (d: string) => new OAuthProtocolError('invalid_client', d, 401);
export const invalidGrant = (d: string) => new OAuthProtocolError('invalid_grant', d);
export const unauthorizedClient = (d: string) => new OAuthProtocolError('unauthorized_client', d);
export const unsupportedGrantType = (d: string) => new OAuthProtocolError('unsupported_grant_type', d);
export const invalidScope = (d: string) => new OAuthProtocolError('invalid_scope', d);
export const invalidTarget = (d: string) => new OAuthProtocolError('invalid_target', d);
// RFC 7591 §3.2.2: a registration refused for its redirect URIs, or for any other field.
export const invalidRedirectUri = (d: string) => new OAuthProtocolError('invalid_redirect_uri', d);
export const invalidClientMetadata = (d: string) => new OAuthProtocolError('invalid_client_metadata', d);
// RFC 8628 §3.5: what a device's poll is told while the human has not decided.
export const authorizationPending = () =>
  new OAuthProtocolError('authorization_pending', 'the user has not yet approved or denied the request');
export const slowDown = (intervalSecs: number) =>
  new OAuthProtocolError('slow_down', `polling too fast: wait at least ${intervalSecs} seconds between requests`);
export const accessDenied = () => new OAuthProtocolError('access_denied', 'the user denied the request');
/**
 * `temporarily_unavailable`, with the status and Retry-After to act on: the device authorization endpoint past its
 * rate limits (shared/oauth/device-rate-limit.ts: 429, RFC 6585 §4), and any of these endpoints while the database
 * is unavailable (503). Not `slow_down`, which RFC 8628 §3.5 defines for polling the token endpoint (a client would
 * add 5 s to a polling interval it does not have yet), nor `invalid_request`, which tells a client its request is
 * wrong and not worth repeating: `temporarily_unavailable` is the registered OAuth error for "try again later", and
 * an RFC 8628 client handles it as any error of §3.2's response.
 */
export const temporarilyUnavailable = (d: string, status: 429 | 503, retryAfterSecs: number) =>
  new OAuthProtocolError('temporarily_unavailable', d, status, { 'retry-after': String(retryAfterSecs) });
export const expiredToken = () =>
  new OAuthProtocolError('expired_token', 'the device code has expired: start a new device authorization');
