// Dynamic client registration (RFC 7591), as an MCP host does on its first connection to a server it has never
// seen: `POST /oauth/register` with the client's metadata, answered with a new client_id. Anyone may call it, so
// what it registers is the least a client can be: public (no secret: PKCE binds its codes, RFC 7591 §2
// `token_endpoint_auth_method: none`), unverified (the consent page says so), commerce only (a capped
// delegation the human sets; never account-level), and limited per source address. Off in live by default
// (OAUTH_DYNAMIC_REGISTRATION).
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { addressBucket } from '../client-address.js';
import { emSql } from '../db/sql.js';
import { line } from '../text.js';
import { type ClientView, newClientId, viewOf } from './clients.js';
import { take } from './device-rate-limit.js';
import { DEVICE_CODE_GRANT } from './metadata.js';
import { invalidClientMetadata, invalidRedirectUri, temporarilyUnavailable } from './protocol-error.js';
import { redirectUriRefusal } from './redirect-uri.js';
import { insertClient } from './store/clients.js';

/** The fixed window of the per-address limit (OAUTH_REGISTRATION_LIMIT_PER_ADDRESS registrations per window). */
export const REGISTRATION_WINDOW_SECS = 600;

const GRANT_TYPES = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT] as const;

/**
 * A redirect URI a dynamically registered client may have: the registration rules (redirect-uri.ts), and only
 * https or http to a loopback host. Not a private-use scheme: any app on a device may claim one, and an
 * unregistered, unverified client has nothing else that ties it to its name.
 */
function dynamicRedirectUriRefusal(raw: string): string | undefined {
  const why = redirectUriRefusal(raw);
  if (why !== undefined) return why;
  return raw.startsWith('https:') || raw.startsWith('http:') ? undefined : 'must be https, or http to a loopback host';
}

const RedirectUris = z
  .array(z.string().max(2000))
  .min(1, 'at least one redirect URI')
  .max(20)
  .superRefine((uris, ctx) => {
    uris.forEach((raw, i) => {
      const why = dynamicRedirectUriRefusal(raw);
      if (why !== undefined) ctx.addIssue({ code: 'custom', message: why, path: [i] });
    });
  });

/**
 * The metadata this server reads (RFC 7591 §2); any other field (client_uri, logo_uri, contacts, ...) is ignored, as
 * §2 allows, and none is echoed back.
 */
const Metadata = z.object({
  client_name: line(100, { trim: true }).min(1, 'client_name is required'),
  // RFC 7591 §2: absent means client_secret_basic; a public client says `none`. Absent is taken as `none` here:
  // this server issues no secrets, and MCP hosts that omit it expect a public client.
  token_endpoint_auth_method: z.literal('none', 'only none: this server registers public clients').optional(),
  grant_types: z
    .array(z.enum(GRANT_TYPES, `must be within ${GRANT_TYPES.join(', ')}`))
    .max(10)
    .optional(),
  response_types: z.array(z.literal('code', 'only code')).max(10).optional(),
  // RFC 7591 §2 `scope`: space-separated; a dynamic client may ask for commerce consent only.
  scope: z.literal('commerce', 'only commerce').optional(),
});

/** RFC 7591 §3.2.1: the client as registered. */
export interface RegistrationResponse {
  readonly client_id: string;
  readonly client_id_issued_at: number;
  readonly client_name: string;
  readonly redirect_uris: string[];
  readonly grant_types: string[];
  readonly response_types: string[];
  readonly token_endpoint_auth_method: 'none';
  readonly scope: 'commerce';
}

const where = (issue: z.core.$ZodIssue | undefined) =>
  issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;

/** The body, checked: RFC 7591 §3.2.2's invalid_redirect_uri for the redirect URIs, invalid_client_metadata else. */
function parseMetadata(body: unknown): { metadata: z.output<typeof Metadata>; redirectUris: string[] } {
  const object = z.record(z.string(), z.unknown()).safeParse(body);
  if (!object.success) throw invalidClientMetadata('send the client metadata as a JSON object');
  const uris = RedirectUris.safeParse(object.data.redirect_uris);
  if (!uris.success) {
    const issue = uris.error.issues[0];
    throw invalidRedirectUri(`redirect_uris${issue?.path.length ? '.' : ': '}${where(issue)}${issue?.message ?? ''}`);
  }
  const metadata = Metadata.safeParse(object.data);
  if (!metadata.success) {
    const issue = metadata.error.issues[0];
    throw invalidClientMetadata(`${where(issue)}${issue?.message ?? 'invalid client metadata'}`);
  }
  return { metadata: metadata.data, redirectUris: [...new Set(uris.data)] };
}

export class RegistrationRateLimited extends Error {
  constructor(readonly retryAfterSecs: number) {
    super('too many registrations from this address');
    this.name = 'RegistrationRateLimited';
  }
}

/**
 * Registers a client for a request from `address` (the client address: shared/client-address.ts). The client is
 * inserted in the transaction that takes it from the address's window (`register:<address>`, an IPv6 address by
 * its /64); past the limit, 429 temporarily_unavailable with Retry-After, and nothing is stored.
 */
export async function registerClient(
  ctx: ServiceContext,
  body: unknown,
  address: string,
): Promise<RegistrationResponse> {
  const { metadata, redirectUris } = parseMetadata(body);
  const now = ctx.now();
  const limit = ctx.config.OAUTH_REGISTRATION_LIMIT_PER_ADDRESS;
  let client: ClientView;
  try {
    client = await ctx.db.em().transactional(async (em) => {
      const bucket = `register:${addressBucket(address)}`;
      const refused = await take(emSql(em), bucket, limit, REGISTRATION_WINDOW_SECS, now);
      if (refused !== null) throw new RegistrationRateLimited(refused);
      const row = await insertClient(
        em,
        {
          clientId: newClientId(),
          name: metadata.client_name,
          redirectUris: JSON.stringify(redirectUris),
          verified: false,
          accountLevel: false,
          registration: 'dynamic',
          metadataExpiresAt: null,
          allowedConsentTypes: JSON.stringify(['commerce']),
        },
        now,
      );
      return viewOf(row);
    });
  } catch (err) {
    if (!(err instanceof RegistrationRateLimited)) throw err;
    throw temporarilyUnavailable(
      `too many registrations from this address: try again in ${err.retryAfterSecs} seconds`,
      429,
      err.retryAfterSecs,
    );
  }
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types:
      metadata.grant_types === undefined ? ['authorization_code', 'refresh_token'] : [...new Set(metadata.grant_types)],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'commerce',
  };
}

/** The request body, as the API description shows it. */
export const RegistrationBody = Metadata.extend({ redirect_uris: z.array(z.string()).min(1).max(20) });
