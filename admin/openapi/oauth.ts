// The API description of the OAuth endpoints (admin/routes/oauth.ts): the human's consent endpoints, which speak the
// BCK envelope, and the connector's token, device authorization and revocation endpoints, which speak RFC 6749.
import { z } from 'zod';
import { Approve, AuthorizationClientFields, AuthorizationTerms } from '../../shared/oauth/authorize.js';
import { ConsentWallet } from '../../shared/oauth/consent.js';
import { DeviceAuthorizationBody } from '../../shared/oauth/device-authorization.js';
import { DeviceDecisionBody, DeviceDetailsBody } from '../../shared/oauth/device-decision.js';
import { AuthorizationCodeBody } from '../../shared/oauth/grant-authorization-code.js';
import { DeviceCodeBody } from '../../shared/oauth/grant-device-code.js';
import { RefreshTokenBody } from '../../shared/oauth/grant-refresh-token.js';
import { DEVICE_CODE_GRANT } from '../../shared/oauth/metadata.js';
import { RegistrationBody } from '../../shared/oauth/registration.js';
import { RevocationBody } from '../../shared/oauth/revocation.js';
import { type Operations, empty, json } from './operation.js';
import { OAuthError } from './responses/common.js';
import {
  AuthorizationApproved,
  AuthorizationDenied,
  BindingPage,
  ClientRegistration,
  ConnectDetails,
  DeviceAuthorization,
  DeviceDetails,
  TokenResponse,
} from './responses/oauth.js';
import { PageQuery } from '../http/pagination.js';
import { BindingParams, ConnectDetailsBody } from '../routes/oauth.js';

/** RFC 8707 §2: the resource the tokens are for; absent: the API. */
const Resource = z.object({
  resource: z
    .string()
    .optional()
    .describe(
      'The resource the tokens are for (RFC 8707), once: `{host_url}/api/v1` (the default) or `{host_url}/mcp`; anything else is `invalid_target`.',
    ),
});

/** The authorization request (RFC 6749 §4.1.1 with PKCE), and what the human decides about it. */
export const AuthorizationRequest = AuthorizationClientFields.extend(AuthorizationTerms.shape).extend(Resource.shape);

/** One body per grant type (RFC 6749 §4.1.3, §6; RFC 8628 §3.4), each parsed by its grant's own schema. */
const TokenRequest = z.discriminatedUnion('grant_type', [
  AuthorizationCodeBody.extend({ grant_type: z.literal('authorization_code') }).extend(Resource.shape),
  RefreshTokenBody.extend({ grant_type: z.literal('refresh_token') }).extend(Resource.shape),
  DeviceCodeBody.extend({ grant_type: z.literal(DEVICE_CODE_GRANT) }).extend(Resource.shape),
]);

const CLIENT_ID = 'c1f0e2d4-0000-4000-8000-000000000001';

export const OAUTH_OPERATIONS: Operations = {
  'POST /oauth/connect/details': {
    summary: 'Describe a connector',
    description: 'What the consent page shows of a connector before the signed-in human decides.',
    tags: ['OAuth'],
    request: { body: ConnectDetailsBody, example: { client_id: CLIENT_ID } },
    responses: { 200: json('The connector.', ConnectDetails) },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0016'],
  },
  'POST /oauth/authorize': {
    summary: 'Decide an authorization request',
    description:
      "The signed-in human (their API key) approves or denies a connector's request. Approval creates the grant, its delegation (erc4337 for `commerce`, card-backed for `account_access`) and a code valid for 60 seconds; a commerce consent may be paid from an organization wallet the human can spend (`organization_wallet_id`, `group_id`).",
    tags: ['OAuth'],
    request: {
      body: AuthorizationRequest.extend(Approve.shape).extend(ConsentWallet.shape),
      example: {
        client_id: CLIENT_ID,
        redirect_uri: 'https://connector.example/callback',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        state: 'xyz',
        scope: 'commerce',
        spending_limit_cents: '5000',
        currency: 'usd',
        duration_secs: 86400,
      },
    },
    responses: {
      201: json('Approved: the code, and where to send the browser.', AuthorizationApproved),
      200: json('Denied: where to send the browser.', AuthorizationDenied),
    },
    codes: [
      'BCK.HTTP.0400',
      'BCK.OAUTH.0016',
      'BCK.OAUTH.0017',
      'BCK.OAUTH.0018',
      'BCK.OAUTH.0025',
      'BCK.OAUTH.0040',
      'BCK.ORG.0003',
      'BCK.ORG.0005',
    ],
  },
  'POST /oauth/device/details': {
    summary: 'Look up a device request',
    description: "The pending request a user code names. Each look-up counts against the user's wrong-guess limit.",
    tags: ['OAuth'],
    request: { body: DeviceDetailsBody, example: { user_code: 'BCDF-GHJK' } },
    responses: { 200: json('The request the code names.', DeviceDetails) },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0020', 'BCK.OAUTH.0021'],
  },
  'POST /oauth/device': {
    summary: 'Decide a device request',
    description:
      'Approve (the cap may be lowered and the duration, `duration_secs`, shortened, never raised) or deny the request a user code names.',
    tags: ['OAuth'],
    request: {
      body: DeviceDecisionBody,
      example: { user_code: 'BCDF-GHJK', approve: true, spending_limit_cents: 1000, duration_secs: 3600 },
    },
    responses: { 204: empty("Decided; the device's next poll gets its tokens or access_denied.") },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0020', 'BCK.OAUTH.0021', 'BCK.ORG.0003', 'BCK.ORG.0005'],
  },
  'GET /oauth/bindings': {
    summary: "List the user's bindings",
    description: "The grants the user gave connectors, newest first, with each grant's cap and spending.",
    tags: ['OAuth'],
    request: { query: PageQuery },
    responses: { 200: json('A page of bindings.', BindingPage) },
    codes: ['BCK.HTTP.0400'],
  },
  'POST /oauth/bindings/:bindingId/revoke': {
    summary: 'Revoke a binding',
    description: 'Revokes the grant, its refresh tokens and its delegation in one transaction.',
    tags: ['OAuth'],
    request: { path: BindingParams.shape },
    responses: { 204: empty('Revoked.') },
    codes: ['BCK.HTTP.0400', 'BCK.OAUTH.0019'],
  },
  'POST /oauth/token': {
    summary: 'Token endpoint',
    description:
      "Redeems an authorization code (with its PKCE verifier), a refresh token (single use: a used one presented again revokes the grant) or a device code (RFC 8628: `authorization_pending` and `slow_down` while the human has not decided). Public clients: `client_id`, no secret. The access token's `aud` is the resource the grant was authorized for (RFC 8707): a `resource` here may repeat it, another one is `invalid_target`. Errors are RFC 6749 §5.2 bodies.",
    tags: ['OAuth'],
    request: {
      body: TokenRequest,
      example: {
        grant_type: 'authorization_code',
        client_id: CLIENT_ID,
        code: 'the-code',
        redirect_uri: 'https://connector.example/callback',
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      },
    },
    responses: { 200: json('The tokens.', TokenResponse) },
    codes: [],
  },
  'POST /oauth/device_authorization': {
    summary: 'Start a device authorization',
    description:
      'RFC 8628 §3.1: the connector gets a device code to poll with and a user code the human types at `verification_uri`. `scope` defaults to `commerce`, the terms to 10.00 USD for a day; `resource` (RFC 8707) names the API (default) or the MCP endpoint (commerce only). Limited per client address (an IPv6 address by its /64) and per client in fixed windows (`OAUTH_DEVICE_AUTH_LIMIT_PER_ADDRESS`, `OAUTH_DEVICE_AUTH_LIMIT_PER_CLIENT`, `OAUTH_DEVICE_AUTH_WINDOW_SECS`), across every process: past either, 429 and nothing is stored.',
    tags: ['OAuth'],
    request: {
      body: DeviceAuthorizationBody.extend(Resource.shape),
      example: { client_id: CLIENT_ID, scope: 'commerce' },
    },
    responses: {
      200: json('The codes.', DeviceAuthorization),
      429: {
        description:
          'Too many device authorizations from this address or for this client in the current window: `temporarily_unavailable` (RFC 6749 §5.2 body); retry after `Retry-After` seconds.',
        content: [
          {
            type: 'application/json',
            schema: OAuthError,
            example: {
              error: 'temporarily_unavailable',
              error_description: 'too many device authorizations from this address: try again in 412 seconds',
            },
          },
        ],
        headers: { 'retry-after': 'Seconds until the window that refused the request is over.' },
      },
    },
    codes: [],
  },
  'POST /oauth/revoke': {
    summary: 'Revoke a token',
    description:
      "RFC 7009: a refresh token or an access token revokes its grant (and the grant's delegation). An unknown token is not an error.",
    tags: ['OAuth'],
    request: { body: RevocationBody, example: { token: 'the-refresh-token', token_type_hint: 'refresh_token' } },
    responses: { 200: empty('Revoked (or nothing to revoke).') },
    codes: [],
  },
  'POST /oauth/register': {
    summary: 'Register a client (dynamic registration)',
    description:
      "RFC 7591: registers a public client (`token_endpoint_auth_method` absent or `none`), unverified and limited to commerce consent, as an MCP host does on its first connection. `redirect_uris` (https, or http to a loopback host) and `client_name` are required. Errors are RFC 7591 §3.2.2 bodies (`invalid_redirect_uri`, `invalid_client_metadata`). Limited per client address (an IPv6 address by its /64) to `OAUTH_REGISTRATION_LIMIT_PER_ADDRESS` per 600 s: past it, 429 and nothing is stored. 404 when `OAUTH_DYNAMIC_REGISTRATION` is off (live's default).",
    tags: ['OAuth'],
    request: {
      body: RegistrationBody,
      example: { client_name: 'My MCP host', redirect_uris: ['https://host.example/oauth/callback'] },
    },
    responses: {
      201: json('The client as registered (RFC 7591 §3.2.1).', ClientRegistration),
      429: {
        description:
          'Too many registrations from this address in the current window: `temporarily_unavailable`; retry after `Retry-After` seconds.',
        content: [
          {
            type: 'application/json',
            schema: OAuthError,
            example: {
              error: 'temporarily_unavailable',
              error_description: 'too many registrations from this address: try again in 412 seconds',
            },
          },
        ],
        headers: { 'retry-after': 'Seconds until the window that refused the request is over.' },
      },
    },
    codes: ['BCK.HTTP.0404'],
  },
};
