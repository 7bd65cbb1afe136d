// Registered OAuth clients (operator CLI: `oauth-clients create|list|update|disable`) and what the consent flow
// may learn of one (`POST /oauth/connect/details`). A disabled client is unknown to every OAuth endpoint, as an
// unregistered one: 400 BCK.OAUTH.0016; and every grant it held is revoked with it.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { randomToken } from '../crypto/hashing.js';
import { CONSENT_TYPES, type ConsentType } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { line } from '../text.js';
import { isMetadataDocumentId, metadataDocumentClient } from './client-metadata-document.js';
import { revokeGrantsIn } from './grants.js';
import { RedirectUri } from './redirect-uri.js';
import {
  type ClientRow,
  allClients,
  findClient,
  findEnabledClient,
  insertClient,
  markClientDisabled,
  updateClientRow,
} from './store/clients.js';
import { activeGrantsOfClient } from './store/grants.js';

const ConsentTypes = z.array(z.enum(CONSENT_TYPES)).max(CONSENT_TYPES.length);
/** The JSON columns, read back through their schemas. */
const StoredRedirectUris = z.array(z.string());

const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

export const CreateClientInput = z
  .object({
    name: line(100, { trim: true }).min(1),
    redirectUris: z.array(RedirectUri).min(1).max(20).transform(unique),
    verified: z.boolean().default(false),
    accountLevel: z.boolean().default(false),
    // A new connector may ask for commerce consent (a capped wallet delegation) unless the operator says otherwise.
    allowedConsentTypes: ConsentTypes.default(['commerce']).transform(unique),
  })
  .strict();
export type CreateClientInput = z.input<typeof CreateClientInput>;

export const UpdateClientInput = z
  .object({
    name: line(100, { trim: true }).min(1).optional(),
    redirectUris: z.array(RedirectUri).min(1).max(20).transform(unique).optional(),
    verified: z.boolean().optional(),
    accountLevel: z.boolean().optional(),
    allowedConsentTypes: ConsentTypes.transform(unique).optional(),
  })
  .strict();
export type UpdateClientInput = z.input<typeof UpdateClientInput>;

export interface ClientView {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: string[];
  readonly verified: boolean;
  readonly accountLevel: boolean;
  readonly allowedConsentTypes: ConsentType[];
}

export function viewOf(row: ClientRow): ClientView {
  return {
    clientId: row.clientId,
    name: row.name,
    redirectUris: StoredRedirectUris.parse(JSON.parse(row.redirectUris)),
    // Only the operator's registrations can be vouched for: a client that registered itself (RFC 7591) or names
    // its own metadata document is whoever published it, whatever a row was later set to.
    verified: row.verified && row.registration === 'operator',
    accountLevel: row.accountLevel,
    allowedConsentTypes: ConsentTypes.parse(JSON.parse(row.allowedConsentTypes)),
  };
}

/** The client as a listing shows it: its registration and whether it is disabled. */
const listedOf = (row: ClientRow) => ({ ...viewOf(row), disabled: row.disabledAt != null });

function invalid(error: z.ZodError): AppError {
  const issue = error.issues[0];
  const where = issue === undefined ? '' : `${issue.path.join('.')}: `;
  return new AppError('BCK.HTTP.0400', { details: `${where}${issue?.message ?? 'invalid client'}` });
}

const unknownClient = (clientId: string): AppError =>
  new AppError('BCK.OAUTH.0016', {
    details: `client ${JSON.stringify(clientId)} is not registered or is disabled`,
    params: {
      clientId,
    },
  });

/**
 * Public: it identifies the connector, it proves nothing (PKCE does). 128 random bits so ids are not guessable in
 * sequence. Never starting with `-`: an operator types it as a word on the command line, where it would read as
 * an option.
 */
export function newClientId(): string {
  for (;;) {
    const id = randomToken(16);
    if (!id.startsWith('-')) return id;
  }
}

/** `input` is parsed here (the CLI hands over what the operator typed). */
export async function createClient(ctx: ServiceContext, input: unknown): Promise<ClientView> {
  const parsed = CreateClientInput.safeParse(input);
  if (!parsed.success) throw invalid(parsed.error);
  const row = await insertClient(
    ctx.db.em(),
    {
      clientId: newClientId(),
      name: parsed.data.name,
      redirectUris: JSON.stringify(parsed.data.redirectUris),
      verified: parsed.data.verified,
      accountLevel: parsed.data.accountLevel,
      registration: 'operator',
      metadataExpiresAt: null,
      allowedConsentTypes: JSON.stringify(parsed.data.allowedConsentTypes),
    },
    ctx.now(),
  );
  return viewOf(row);
}

export async function listClients(ctx: ServiceContext): Promise<{ clients: ReturnType<typeof listedOf>[] }> {
  const rows = await allClients(ctx.db.em());
  return { clients: rows.map(listedOf) };
}

export async function updateClient(ctx: ServiceContext, clientId: string, input: unknown) {
  const parsed = UpdateClientInput.safeParse(input);
  if (!parsed.success) throw invalid(parsed.error);
  const p = parsed.data;
  const json = <T>(v: T | undefined) => (v === undefined ? undefined : JSON.stringify(v));
  const row = await updateClientRow(
    ctx.db.em(),
    clientId,
    {
      name: p.name,
      redirectUris: json(p.redirectUris),
      verified: p.verified,
      accountLevel: p.accountLevel,
      allowedConsentTypes: json(p.allowedConsentTypes),
    },
    ctx.now(),
  );
  if (row === null) throw unknownClient(clientId);
  return listedOf(row);
}

/**
 * Disables a client for good, in ONE transaction with the revocation of every live grant of the client (each
 * grant's refresh tokens and delegation with it, as a user's revocation does): its access tokens stop at their next
 * use in every process, since each payment is a conditional UPDATE of the grant's delegation, which refuses a
 * revoked one at once, and the grant check of a token (cached for at most API_KEY_CACHE_MS) refuses a revoked grant.
 * Idempotent; disabling a disabled client revokes any grant of it still live (one approved while the client was
 * being disabled, or left live by a version that did not revoke them).
 */
export async function disableClient(ctx: ServiceContext, clientId: string) {
  const now = ctx.now();
  const result = await ctx.db.em().transactional(async (em) => {
    // A write first: on SQLite it takes the write lock before anything is read (see revokeGrantsIn).
    await markClientDisabled(em, clientId, now);
    const row = await findClient(em, clientId);
    if (row === null) return undefined;
    const live = await activeGrantsOfClient(em, clientId);
    const grantsRevoked = await revokeGrantsIn(em, live, 'client_disabled', now);
    return { ...listedOf(row), grantsRevoked };
  });
  if (result === undefined) throw unknownClient(clientId);
  return result;
}

/**
 * An enabled client, or 400 BCK.OAUTH.0016: the one resolver of a client_id, which every OAuth endpoint goes
 * through. A client_id that is an https URL names a Client ID Metadata Document (client-metadata-document.ts),
 * resolved from the stored copy while fresh, else fetched; one that cannot be fetched or is invalid is unknown.
 */
export async function enabledClient(ctx: ServiceContext, clientId: string): Promise<ClientView> {
  const row = isMetadataDocumentId(clientId)
    ? await metadataDocumentClient(ctx, clientId)
    : await findEnabledClient(ctx.db.em(), clientId);
  if (row === null) throw unknownClient(clientId);
  return viewOf(row);
}

export interface ConnectDetails {
  readonly connectorName: string;
  /** Whether the consent page may offer account-level access: a verified, account-level client with consent
   *  types to offer. */
  readonly accountLevelAllowed: boolean;
  readonly allowedConsentTypes: ConsentType[];
}

/** What the consent page shows of a connector before the human decides. */
export async function connectDetails(ctx: ServiceContext, clientId: string): Promise<ConnectDetails> {
  const c = await enabledClient(ctx, clientId);
  return {
    connectorName: c.name,
    accountLevelAllowed: c.accountLevel && c.verified && c.allowedConsentTypes.length > 0,
    allowedConsentTypes: c.allowedConsentTypes,
  };
}
