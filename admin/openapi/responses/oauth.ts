// What the discovery documents and the OAuth endpoints answer (shared/oauth, shared/keys).
import { z } from 'zod';
import { CONSENT_TYPES } from '../../../shared/db/entities/index.js';
import { BINDING_REVOKE_REASONS, type Binding as BindingType } from '../../../shared/oauth/bindings.js';
import type { ConnectDetails as ConnectDetailsType } from '../../../shared/oauth/clients.js';
import type { DeviceAuthorizationResponse } from '../../../shared/oauth/device-authorization.js';
import type { DeviceDetails as DeviceDetailsType } from '../../../shared/oauth/device-decision.js';
import type { RegistrationResponse } from '../../../shared/oauth/registration.js';
import type { AuthorizationServerMetadata, ProtectedResourceMetadata } from '../../../shared/oauth/metadata.js';
import type { TokenResponse as TokenResponseType } from '../../../shared/oauth/tokens.js';
import { CURRENCIES } from '../../../shared/spend/currency.js';
import { Decimal, type Fits, Id, Timestamp, named } from './common.js';

export const Jwks = named(
  'Jwks',
  z.object({
    keys: z.array(
      z.object({
        kty: z.literal('EC'),
        crv: z.literal('P-256'),
        x: z.string(),
        y: z.string(),
        kid: z.string(),
        alg: z.literal('ES256'),
        use: z.literal('sig'),
      }),
    ),
  }),
  'The public keys (RFC 7517) that verify the tokens this service signs: OAuth access tokens, delegation tokens, credit access tokens and proofs.',
);

export const AuthorizationServer = named(
  'AuthorizationServer',
  z.object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    device_authorization_endpoint: z.string(),
    revocation_endpoint: z.string(),
    jwks_uri: z.string(),
    grant_types_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    registration_endpoint: z.string().optional(),
    client_id_metadata_document_supported: z.boolean(),
  }),
  'OAuth 2.0 authorization server metadata (RFC 8414).',
);

export const ProtectedResource = named(
  'ProtectedResource',
  z.object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
  }),
  'OAuth 2.0 protected resource metadata of the API (RFC 9728).',
);

export const TokenResponse = named(
  'TokenResponse',
  z.object({
    /** An RFC 9068 JWT (`typ: at+jwt`), ES256. */
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().positive(),
    /** Single use: a refresh answers a new one, and a used one presented again revokes the grant. */
    refresh_token: z.string(),
    scope: z.enum(CONSENT_TYPES),
  }),
  'A successful token response (RFC 6749 §5.1).',
);

export const DeviceAuthorization = named(
  'DeviceAuthorization',
  z.object({
    device_code: z.string(),
    user_code: z.string(),
    verification_uri: z.string(),
    verification_uri_complete: z.string(),
    expires_in: z.number().int().positive(),
    interval: z.number().int().positive(),
  }),
  'A device authorization (RFC 8628 §3.2): show the user code, then poll the token endpoint.',
);

export const ClientRegistration = named(
  'ClientRegistration',
  z.object({
    client_id: z.string(),
    client_id_issued_at: z.number().int(),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.literal('none'),
    scope: z.literal('commerce'),
  }),
  'A dynamically registered client (RFC 7591 §3.2.1): public, unverified, commerce consent only.',
);

export const ConnectDetails = named(
  'ConnectDetails',
  z.object({
    connectorName: z.string(),
    accountLevelAllowed: z.boolean(),
    allowedConsentTypes: z.array(z.enum(CONSENT_TYPES)),
  }),
  'What the consent page shows of a connector before the human decides.',
);

export const AuthorizationApproved = named(
  'AuthorizationApproved',
  z.object({ code: z.string(), redirectTo: z.string() }),
  'The approval: the code, and the redirect URI carrying it with `state` and `iss` (RFC 9207).',
);

export const AuthorizationDenied = named(
  'AuthorizationDenied',
  z.object({ redirectTo: z.string() }),
  'The denial: the redirect URI carrying `error=access_denied`.',
);

export const DeviceDetails = named(
  'DeviceDetails',
  z.object({
    connectorName: z.string(),
    verified: z.boolean(),
    publisher: z
      .string()
      .optional()
      .describe("The host publishing the client's metadata document, when the client is named by one."),
    consentType: z.enum(CONSENT_TYPES),
    spendingLimitCents: Decimal,
    currency: z.enum(CURRENCIES),
    durationSecs: z.number().int().positive(),
  }),
  'The pending device request a user code names.',
);

export const Binding = named(
  'Binding',
  z.object({
    bindingId: Id,
    clientId: z.string(),
    connectorName: z.string(),
    consentType: z.enum(CONSENT_TYPES),
    delegationId: Id,
    spendingLimitCents: Decimal,
    amountSpentCents: Decimal,
    currency: z.string(),
    state: z.enum(['active', 'expired', 'exhausted', 'revoked']),
    createdAt: Timestamp,
    lastUsedAt: Timestamp.nullable(),
    revokedAt: Timestamp.nullable(),
    /** Why a revoked binding is revoked; null while it is not. */
    revokedReason: z.enum(BINDING_REVOKE_REASONS).nullable(),
  }),
  "A grant the user gave a connector, with its delegation's cap and spending; a revoked one says why (`revokedReason`: `user`, `revocation_endpoint`, `code_replay`, `refresh_reuse`, `device_replay`, `client_disabled` when the operator disabled the connector, `delegation_revoked` when the user revoked its delegation).",
);

export const BindingPage = named(
  'BindingPage',
  z.object({
    bindings: z.array(Binding),
    total: z.number().int().nonnegative(),
    page: z.number().int().positive(),
    offset: z.number().int().positive(),
  }),
  "A page of the user's bindings.",
);

export type AuthorizationServerFits = Fits<typeof AuthorizationServer, AuthorizationServerMetadata>;
export type ProtectedResourceFits = Fits<typeof ProtectedResource, ProtectedResourceMetadata>;
export type TokenResponseFits = Fits<typeof TokenResponse, TokenResponseType>;
export type DeviceAuthorizationFits = Fits<typeof DeviceAuthorization, DeviceAuthorizationResponse>;
export type ClientRegistrationFits = Fits<typeof ClientRegistration, RegistrationResponse>;
export type ConnectDetailsFits = Fits<typeof ConnectDetails, ConnectDetailsType>;
export type DeviceDetailsFits = Fits<typeof DeviceDetails, DeviceDetailsType>;
export type BindingFits = Fits<typeof Binding, BindingType>;
