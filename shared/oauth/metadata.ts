// Discovery documents of the OAuth authorization server (RFC 8414) and of the API as a protected resource
// (RFC 9728). A connector starts from a 401's WWW-Authenticate challenge (or from {host_url}) and finds from these
// where to send the human for consent and where to exchange codes for tokens. Built from configuration only.
//
// The authorization endpoint is the consent page on the web app host, with the CAIP-2 network of this
// environment as a query parameter (connectors written for the hosted service expect it there). The token,
// device and revocation endpoints are on {host_url}. `scopes_supported` is deliberately absent: the two consent
// types are not scopes a client may list and request freely (RFC 8414 §2 makes the field optional).
import type { Config } from '../../config/index.js';
import { NETWORKS } from '../assets.js';
import { TOKEN_AUDIENCES, type TokenAudience } from '../db/entities/index.js';

/** Where each protected resource is, below {host_url}. */
const RESOURCE_PATHS: Readonly<Record<TokenAudience, string>> = { api: '/api/v1', mcp: '/mcp' };

/**
 * A resource's identifier (RFC 9728 §1.2, RFC 8707 §2), the `aud` of the access tokens issued for it: the API
 * (`{host_url}/api/v1`, the default) or the MCP endpoint (`{host_url}/mcp`).
 */
export const resourceOf = (config: Pick<Config, 'publicUrl'>, audience: TokenAudience = 'api'): string =>
  `${config.publicUrl}${RESOURCE_PATHS[audience]}`;

/** The audience a `resource` parameter names (RFC 8707 §2), or undefined for one this service does not serve. */
export function audienceOf(config: Pick<Config, 'publicUrl'>, resource: string): TokenAudience | undefined {
  return TOKEN_AUDIENCES.find((a) => resourceOf(config, a) === resource);
}

/** Where a resource's protected-resource metadata is served (RFC 9728 §3.1: the well-known path, then the
 *  resource's own path, so the API's is the bare well-known URL and /mcp's ends in /mcp). */
export const resourceMetadataUrl = (publicUrl: string, audience: TokenAudience = 'api'): string =>
  `${publicUrl}/.well-known/oauth-protected-resource${audience === 'mcp' ? '/mcp' : ''}`;

/** The challenge of a 401 for a presented token that is expired, revoked or not for this resource (RFC 6750
 *  §3.1 `invalid_token`): the client refreshes, or asks its human again, rather than look for a credential. */
export const invalidTokenChallenge = (publicUrl: string, audience: TokenAudience = 'api'): string =>
  `Bearer error="invalid_token", resource_metadata="${resourceMetadataUrl(publicUrl, audience)}"`;

/** The challenge of a 401 (RFC 6750 §3, `resource_metadata` of RFC 9728 §5.1). */
export const bearerChallenge = (publicUrl: string, audience: TokenAudience = 'api'): string =>
  `Bearer resource_metadata="${resourceMetadataUrl(publicUrl, audience)}"`;

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly device_authorization_endpoint: string;
  readonly revocation_endpoint: string;
  readonly jwks_uri: string;
  readonly grant_types_supported: readonly string[];
  readonly response_types_supported: readonly string[];
  readonly code_challenge_methods_supported: readonly string[];
  readonly token_endpoint_auth_methods_supported: readonly string[];
  /** RFC 7591 §3: only while dynamic registration is on (OAUTH_DYNAMIC_REGISTRATION). */
  readonly registration_endpoint?: string;
  /** draft-ietf-oauth-client-id-metadata-document §4: an https client_id names the client's own metadata. */
  readonly client_id_metadata_document_supported: boolean;
}

export function authorizationServerMetadata(
  config: Pick<Config, 'publicUrl' | 'webAppUrl' | 'ENVIRONMENT' | 'oauthDynamicRegistration'>,
): AuthorizationServerMetadata {
  const host = config.publicUrl;
  const network = encodeURIComponent(NETWORKS[config.ENVIRONMENT].caip2);
  return {
    issuer: host,
    authorization_endpoint: `${config.webAppUrl}/oauth/authorize?network=${network}`,
    token_endpoint: `${host}/oauth/token`,
    device_authorization_endpoint: `${host}/oauth/device_authorization`,
    revocation_endpoint: `${host}/oauth/revoke`,
    jwks_uri: `${host}/.well-known/jwks.json`,
    grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
    response_types_supported: ['code'],
    // PKCE with S256 only (RFC 7636 §4.2; `plain` protects nothing a public client needs protecting).
    code_challenge_methods_supported: ['S256'],
    // Public clients only: PKCE, not a client secret, binds the code to the client that asked for it.
    token_endpoint_auth_methods_supported: ['none'],
    ...(config.oauthDynamicRegistration ? { registration_endpoint: `${host}/oauth/register` } : {}),
    // A client (an MCP host) may use the https URL of its Client ID Metadata Document as its client_id, unregistered
    // (shared/oauth/client-metadata-document.ts).
    client_id_metadata_document_supported: true,
  };
}

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly bearer_methods_supported: readonly string[];
}

export function protectedResourceMetadata(
  config: Pick<Config, 'publicUrl'>,
  audience: TokenAudience = 'api',
): ProtectedResourceMetadata {
  return {
    resource: resourceOf(config, audience),
    authorization_servers: [config.publicUrl],
    // RFC 6750 §2.1 only: a token in a query string or form body ends up in logs.
    bearer_methods_supported: ['header'],
  };
}
