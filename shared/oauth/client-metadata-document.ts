// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which MCP 2025-11-25 uses): a client
// that has never registered names itself by the https URL of a JSON document it publishes, and that URL is its
// client_id. Resolving one fetches the document through the outbound-HTTP module (shared/upstream: the SSRF guard,
// no redirects, a small byte cap and a few seconds), checks it, and stores it as an oauth_client row (registration
// `metadata_document`: unverified, commerce only) until the document's cache lifetime ends, when it is fetched
// again, so a change of the document (a redirect URI removed) takes effect within that lifetime.
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { isUniqueViolation } from '../db/sql.js';
import { line } from '../text.js';
import { createUpstream } from '../upstream/index.js';
import { RedirectUri } from './redirect-uri.js';
import { type ClientRow, findClient, saveMetadataDocumentClient } from './store/clients.js';

/** The draft's §6.5 recommendation for a document: small. Larger answers are refused unread. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
/** The whole fetch, connect included: a consent page waits for it. */
const FETCH_BUDGET_MS = 5_000;
/** How long a document is used, from its Cache-Control max-age, within these bounds; this when it has none. */
export const MIN_DOCUMENT_TTL_SECS = 60;
export const MAX_DOCUMENT_TTL_SECS = 86_400;
export const DEFAULT_DOCUMENT_TTL_SECS = 300;

/** The longest client_id the OAuth endpoints take (their schemas' `client_id`), so the longest document URL. */
export const MAX_DOCUMENT_URL_LENGTH = 200;

/**
 * Whether a client_id names a metadata document (draft §3): an https URL with a path, without a fragment, userinfo
 * or dot segments, in the form the URL parser keeps as is (so the id compared with the document's `client_id` is
 * exactly the URL fetched), and no longer than any client_id. An operator's or a dynamic client's id (random
 * base64url) never is one.
 */
export function isMetadataDocumentId(clientId: string): boolean {
  if (clientId.length > MAX_DOCUMENT_URL_LENGTH) return false;
  if (!clientId.startsWith('https://') || clientId.includes('#')) return false;
  const url = URL.parse(clientId);
  if (url === null || url.href !== clientId) return false;
  if (url.username !== '' || url.password !== '') return false;
  if (url.pathname === '/' || url.pathname === '') return false;
  return !url.pathname.split('/').some((s) => s === '.' || s === '..');
}

/** The host that publishes a metadata-document client (the pages show it: it is who the client is), else undefined. */
export const publisherOf = (clientId: string): string | undefined =>
  isMetadataDocumentId(clientId) ? new URL(clientId).host : undefined;

/** What this server reads of the document (draft §4: the RFC 7591 client metadata); any other field is ignored. */
const Document = z.object({
  client_id: z.string(),
  client_name: line(100, { trim: true }).min(1),
  redirect_uris: z.array(RedirectUri).min(1).max(20),
  // A document cannot authenticate with a secret it publishes: public clients only (draft §4.1).
  token_endpoint_auth_method: z.literal('none').optional(),
});

/**
 * How long the document may be used, in seconds, from the answer's Cache-Control: `no-store` or `no-cache`: 0
 * (fetched again at the next use); else `max-age` within [MIN, MAX]; else the default.
 */
export function documentTtlSecs(cacheControl: string | string[] | undefined): number {
  const value = (Array.isArray(cacheControl) ? cacheControl.join(',') : (cacheControl ?? '')).toLowerCase();
  const directives = value.split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?([0-9]{1,10})"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  if (maxAge === undefined) return DEFAULT_DOCUMENT_TTL_SECS;
  return Math.min(MAX_DOCUMENT_TTL_SECS, Math.max(MIN_DOCUMENT_TTL_SECS, Number(maxAge)));
}

export interface FetchedDocument {
  readonly name: string;
  readonly redirectUris: string[];
  readonly ttlSecs: number;
}

/**
 * Fetches and checks the document: undefined when it cannot be fetched (refused by the SSRF guard, unreachable,
 * too slow, too large, not 200) or is not a valid document for this URL. Why is logged, never told to the caller:
 * the endpoint answers as for an unknown client.
 */
export async function fetchClientMetadata(ctx: ServiceContext, url: string): Promise<FetchedDocument | undefined> {
  // One upstream per fetch, closed after it: documents are fetched rarely (once per cache lifetime), and no pooled
  // connection is left to hold the process open at shutdown.
  const upstream = createUpstream({
    // The operator's setting for merchants: loopback and private addresses only where targets may be private
    // (tests, local development); never cloud metadata or link-local addresses.
    allowPrivate: ctx.config.ROUTER_ALLOW_PRIVATE_TARGETS,
    connectTimeoutMs: FETCH_BUDGET_MS,
    headersTimeoutMs: FETCH_BUDGET_MS,
    bodyTimeoutMs: FETCH_BUDGET_MS,
    maxTotalMs: FETCH_BUDGET_MS,
    maxBodyBytes: MAX_DOCUMENT_BYTES,
  });
  const refused = (reason: string) => {
    ctx.log.info({ clientId: url, reason }, 'client metadata document refused');
    return undefined;
  };
  try {
    const r = await upstream.request({ url, method: 'GET', headers: { accept: 'application/json' } });
    if (r.type !== 'response') return refused(r.reason);
    if (r.status !== 200) return refused(`answered ${r.status}`);
    let json: unknown;
    try {
      json = JSON.parse(r.body.toString('utf8'));
    } catch {
      return refused('not JSON');
    }
    const doc = Document.safeParse(json);
    if (!doc.success) return refused(doc.error.issues[0]?.message ?? 'invalid document');
    // Draft §4.1: the document names itself; one served for another URL is not this client's.
    if (doc.data.client_id !== url) return refused('client_id is not the URL of the document');
    return {
      name: doc.data.client_name,
      redirectUris: [...new Set(doc.data.redirect_uris)],
      ttlSecs: documentTtlSecs(r.headers['cache-control']),
    };
  } finally {
    await upstream.close();
  }
}

/**
 * The enabled client a metadata-document client_id names: the stored row while its document is fresh, else the
 * document fetched anew and stored; null when the document cannot be had (or the operator disabled the client).
 */
export async function metadataDocumentClient(ctx: ServiceContext, clientId: string): Promise<ClientRow | null> {
  const stored = await findClient(ctx.db.em(), clientId);
  if (stored !== null && (stored.disabledAt != null || stored.registration !== 'metadata_document')) return null;
  const now = ctx.now();
  if (stored?.metadataExpiresAt != null && stored.metadataExpiresAt.getTime() > now.getTime()) return stored;
  const doc = await fetchClientMetadata(ctx, clientId);
  if (doc === undefined) return null;
  const fields = {
    clientId,
    name: doc.name,
    redirectUris: JSON.stringify(doc.redirectUris),
    metadataExpiresAt: new Date(now.getTime() + doc.ttlSecs * 1000),
  };
  try {
    return await ctx.db.em().transactional((em) => saveMetadataDocumentClient(em, fields, now));
  } catch (err) {
    // A parallel resolution inserted it first: theirs is as fresh as ours.
    if (!isUniqueViolation(err)) throw err;
    return findClient(ctx.db.em(), clientId);
  }
}
