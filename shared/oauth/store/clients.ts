// Every statement on oauth_client, all through the entity manager. The JSON columns (redirect URIs, consent types)
// are written and read here as the text they are stored as; clients.ts turns them into values through its schemas.
import type { InferEntity } from '@mikro-orm/core';
import { OAuthClient } from '../../db/entities/index.js';
import type { Em, SqlTx } from '../../db/sql.js';

export type ClientRow = InferEntity<typeof OAuthClient>;

/** The columns an operator may change after registration (the JSON columns as their stored text); undefined: kept. */
export type ClientChanges = {
  readonly [K in 'name' | 'redirectUris' | 'verified' | 'accountLevel' | 'allowedConsentTypes']?:
    | ClientRow[K]
    | undefined;
};

export async function insertClient(
  em: Em,
  row: Omit<ClientRow, 'disabledAt' | 'createdAt' | 'updatedAt'>,
  now: Date,
): Promise<ClientRow> {
  const created = em.create(OAuthClient, { ...row, disabledAt: null, createdAt: now, updatedAt: now });
  await em.flush();
  return created;
}

/** Every client, oldest first. */
export const allClients = (em: Em): Promise<ClientRow[]> =>
  em.find(OAuthClient, {}, { orderBy: { createdAt: 'asc', clientId: 'asc' } });

/** The client, enabled or not. */
export const findClient = (em: Em, clientId: string): Promise<ClientRow | null> =>
  em.findOne(OAuthClient, { clientId });

/** The client when it is not disabled. */
export const findEnabledClient = (em: Em, clientId: string): Promise<ClientRow | null> =>
  em.findOne(OAuthClient, { clientId, disabledAt: null });

/** The clients named, enabled or not (a listing shows a disabled one as such). */
export const clientsByIds = (em: Em, clientIds: readonly string[]): Promise<ClientRow[]> =>
  em.find(OAuthClient, { clientId: { $in: [...clientIds] } });

/** Writes the given columns and `updatedAt`; null when there is no such client. */
export async function updateClientRow(
  em: Em,
  clientId: string,
  changes: ClientChanges,
  now: Date,
): Promise<ClientRow | null> {
  const row = await em.findOne(OAuthClient, { clientId });
  if (row === null) return null;
  if (changes.name !== undefined) row.name = changes.name;
  if (changes.redirectUris !== undefined) row.redirectUris = changes.redirectUris;
  if (changes.verified !== undefined) row.verified = changes.verified;
  if (changes.accountLevel !== undefined) row.accountLevel = changes.accountLevel;
  if (changes.allowedConsentTypes !== undefined) row.allowedConsentTypes = changes.allowedConsentTypes;
  row.updatedAt = now;
  await em.flush();
  return row;
}

/** Marks the client disabled unless it already is (the first disable's time stays); the rows changed. */
export const markClientDisabled = (em: Em, clientId: string, now: Date): Promise<number> =>
  em.nativeUpdate(OAuthClient, { clientId, disabledAt: null }, { disabledAt: now, updatedAt: now });

/** What a client's metadata document says, as stored (the JSON column as its text). */
export interface MetadataDocumentFields {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: string;
  readonly metadataExpiresAt: Date;
}

/**
 * Inserts or refreshes the client a Client ID Metadata Document names: unverified, commerce only, never
 * account-level, whatever the document says. Null when the row is a client of another registration (an operator's
 * or a dynamic client's id cannot be an https URL, so only a hand-edited row could be), which is left alone.
 */
export async function saveMetadataDocumentClient(
  em: Em,
  fields: MetadataDocumentFields,
  now: Date,
): Promise<ClientRow | null> {
  const row = await em.findOne(OAuthClient, { clientId: fields.clientId });
  if (row === null) {
    return insertClient(
      em,
      {
        ...fields,
        verified: false,
        accountLevel: false,
        registration: 'metadata_document',
        allowedConsentTypes: JSON.stringify(['commerce']),
      },
      now,
    );
  }
  if (row.registration !== 'metadata_document') return null;
  row.name = fields.name;
  row.redirectUris = fields.redirectUris;
  row.metadataExpiresAt = fields.metadataExpiresAt;
  row.updatedAt = now;
  await em.flush();
  return row;
}

/**
 * Deletes up to `limit` dynamically registered clients created before `before` that never got a grant, in one
 * statement; how many it deleted. Hand SQL, on the caller's transaction: "never got a grant" is a `not exists`.
 */
export const purgeUnusedDynamicClientsIn = (tx: SqlTx, before: Date, limit: number): Promise<number> =>
  tx.run(
    `delete from oauth_client where client_id in (
       select c.client_id from oauth_client c
        where c.registration = 'dynamic' and c.created_at < ?
          and not exists (select 1 from oauth_grant g where g.client_id = c.client_id)
        limit ?)`,
    [before, limit],
  );
