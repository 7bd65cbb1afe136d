import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/** What a connector may ask a user to consent to (shared/oauth/consent.ts). */
export const CONSENT_TYPES = ['commerce', 'account_access'] as const;
export type ConsentType = (typeof CONSENT_TYPES)[number];

/**
 * The protected resources an access token may be for (RFC 8707 resource indicators), by name: `api` is
 * `{host_url}/api/v1` (every API route), `mcp` is `{host_url}/mcp` (the MCP endpoint). A token is accepted only by
 * the resource it names in `aud`; the URLs follow from configuration (shared/oauth/metadata.ts).
 */
export const TOKEN_AUDIENCES = ['api', 'mcp'] as const;
export type TokenAudience = (typeof TOKEN_AUDIENCES)[number];

/**
 * How a client came to be known: registered by the operator (CLI), registered by itself (RFC 7591 dynamic
 * registration), or named by the URL of its Client ID Metadata Document. Only the operator's may be verified.
 */
export const CLIENT_REGISTRATIONS = ['operator', 'dynamic', 'metadata_document'] as const;
export type ClientRegistration = (typeof CLIENT_REGISTRATIONS)[number];

/**
 * A pre-registered public OAuth client: a connector (an agent framework, an MCP client) that asks users for
 * capped consent. Public means no secret: PKCE binds each code to the client instance that asked for it. The
 * operator registers clients with the CLI (`oauth-clients create`). `redirectUris` and `allowedConsentTypes` are
 * JSON arrays, read back through their schemas (shared/oauth/clients.ts).
 */
export const OAuthClient = defineEntity({
  name: 'OAuthClient',
  tableName: 'oauth_client',
  properties: {
    clientId: p.string().primary(),
    name: p.string(),
    /** JSON array of absolute URIs, matched exactly (RFC 6749 §3.1.2.3 / RFC 8252 §8.4, no partial matching). */
    redirectUris: p.text(),
    /** The operator checked who runs this connector: its name is shown as verified on the consent page. */
    verified: p.boolean().default(false),
    /** May ask for account-level access (`account_access`), given it is also verified. */
    accountLevel: p.boolean().default(false),
    /** JSON array of ConsentType. */
    allowedConsentTypes: p.text(),
    /** Set when disabled: the client is then unknown to every OAuth endpoint. */
    disabledAt: p.datetime().nullable(),
    registration: p.enum(CLIENT_REGISTRATIONS).default('operator'),
    /** A metadata-document client: when its document (fetched from its client_id URL) must be fetched again. */
    metadataExpiresAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** What a grant row's status may hold; `expired` and `exhausted` follow from its delegation (shared/oauth/bindings.ts). */
export const GRANT_STORED_STATUSES = ['Active', 'Revoked'] as const;

/**
 * Why a grant was revoked: by its user, by the server on a sign that a credential leaked, or by the operator
 * disabling its client (`oauth-clients disable` revokes every live grant of the client).
 */
export const GRANT_REVOKE_REASONS = [
  'user',
  'revocation_endpoint',
  'code_replay',
  'refresh_reuse',
  'device_replay',
  'client_disabled',
] as const;
export type GrantRevokeReason = (typeof GRANT_REVOKE_REASONS)[number];

/**
 * A user's consent to one client (a "binding"): one consent type, bound to the capped, expiring delegation created
 * with it. Every code, refresh token and access token issued for the consent names the grant; revoking it (and its
 * delegation, in the same transaction) ends them all.
 */
export const OAuthGrant = defineEntity({
  name: 'OAuthGrant',
  tableName: 'oauth_grant',
  // By client: disabling a client revokes its live grants in the transaction that disables it.
  indexes: [{ properties: ['userId', 'createdAt'] }, { properties: ['clientId', 'status'] }],
  properties: {
    id: p.string().primary(),
    userId: p.string(),
    clientId: p.string(),
    consentType: p.enum(CONSENT_TYPES),
    delegationId: p.string(),
    status: p.enum(GRANT_STORED_STATUSES),
    revokedAt: p.datetime().nullable(),
    revokedReason: p.enum(GRANT_REVOKE_REASONS).nullable(),
    createdAt: p.datetime(),
  },
});

/**
 * An authorization code (RFC 6749 §4.1.2): stored as the SHA-256 of the code, bound to its client, redirect URI
 * and PKCE challenge (RFC 7636 §4.4), consumed once by a conditional UPDATE of `consumedAt`.
 */
export const OAuthCode = defineEntity({
  name: 'OAuthCode',
  tableName: 'oauth_code',
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    codeHash: p.string().primary(),
    grantId: p.string(),
    clientId: p.string(),
    redirectUri: p.text(),
    codeChallenge: p.string(),
    expiresAt: p.datetime(),
    consumedAt: p.datetime().nullable(),
    /** The resource the tokens redeemed with it are for (RFC 8707). */
    audience: p.enum(TOKEN_AUDIENCES).default('api'),
    createdAt: p.datetime(),
  },
});

/**
 * A refresh token (RFC 6749 §6), stored hashed. Rotated on every use: the use marks `rotatedAt` by a conditional
 * UPDATE, so of parallel uses one wins; a use of a rotated token is a reuse (a leaked token) and revokes the grant.
 */
export const OAuthRefreshToken = defineEntity({
  name: 'OAuthRefreshToken',
  tableName: 'oauth_refresh_token',
  indexes: [{ properties: ['grantId'] }, { properties: ['expiresAt'] }],
  properties: {
    tokenHash: p.string().primary(),
    grantId: p.string(),
    clientId: p.string(),
    expiresAt: p.datetime(),
    rotatedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    /** The resource the tokens redeemed with it are for (RFC 8707). */
    audience: p.enum(TOKEN_AUDIENCES).default('api'),
    createdAt: p.datetime(),
  },
});

/** Where a device authorization stands (RFC 8628 §3.5 names what polling answers for each). */
export const DEVICE_STATUSES = ['pending', 'approved', 'denied', 'redeemed'] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/**
 * A device authorization request (RFC 8628 §3.2): the device code and the user code stored hashed. The human
 * approves it with the user code; the device then redeems it once, by a conditional UPDATE of `status`.
 */
export const OAuthDeviceCode = defineEntity({
  name: 'OAuthDeviceCode',
  tableName: 'oauth_device_code',
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    deviceCodeHash: p.string().primary(),
    /** SHA-256 of the normalized user code (8 letters, upper case, no dash). */
    userCodeHash: p.string().unique(),
    clientId: p.string(),
    consentType: p.enum(CONSENT_TYPES),
    spendingLimitCents: p.type(Int64Type),
    currency: p.string(),
    durationSecs: p.integer(),
    status: p.enum(DEVICE_STATUSES),
    userId: p.string().nullable(),
    grantId: p.string().nullable(),
    /** The polling interval in seconds; each `slow_down` adds 5 (RFC 8628 §3.5). */
    intervalSecs: p.integer(),
    lastPolledAt: p.datetime().nullable(),
    expiresAt: p.datetime(),
    /** The resource the tokens redeemed with it are for (RFC 8707). */
    audience: p.enum(TOKEN_AUDIENCES).default('api'),
    createdAt: p.datetime(),
  },
});

/**
 * Device authorizations started in the current fixed window, per bucket: `address:<IPv4 or IPv6 /64>` and
 * `client:<clientId>` (shared/oauth/device-rate-limit.ts). A bucket is taken by one upsert in the transaction that
 * inserts the device code, so the limit holds across processes and a refused request leaves nothing behind.
 */
export const OAuthDeviceRate = defineEntity({
  name: 'OAuthDeviceRate',
  tableName: 'oauth_device_rate',
  properties: {
    bucket: p.string().primary(),
    windowStartedAt: p.datetime(),
    used: p.integer(),
  },
});

/** Wrong user-code guesses of one user in the current window (RFC 8628 §5.1 brute-force limit). */
export const OAuthUserCodeAttempts = defineEntity({
  name: 'OAuthUserCodeAttempts',
  tableName: 'oauth_user_code_attempts',
  properties: {
    userId: p.string().primary(),
    windowStartedAt: p.datetime(),
    failures: p.integer(),
  },
});

/**
 * A signed-in session of the consent and device pages: the cookie holds a random token, the row its SHA-256. It
 * ends at sign-out, after `OAUTH_PAGE_SESSION_IDLE_SECS` without use, or at `expiresAt`, whichever comes first.
 */
export const OAuthPageSession = defineEntity({
  name: 'OAuthPageSession',
  tableName: 'oauth_page_session',
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    sessionHash: p.string().primary(),
    userId: p.string(),
    lastSeenAt: p.datetime(),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
  },
});

/**
 * An MCP session (the Streamable HTTP transport's `Mcp-Session-Id`): the id is random, the row holds its SHA-256,
 * bound to the grant whose token opened it. Nothing else of a session lives in a process, so any proxy process
 * serves any session, and one that restarts loses none; DELETE ends it for all of them.
 */
export const McpSession = defineEntity({
  name: 'McpSession',
  tableName: 'mcp_session',
  indexes: [{ properties: ['grantId'] }],
  properties: {
    sessionHash: p.string().primary(),
    grantId: p.string(),
    /** The protocol version negotiated by the initialize request that opened it. */
    protocolVersion: p.string(),
    endedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
