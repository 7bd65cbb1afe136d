// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document) over HTTP: a client_id that is an
// https URL is resolved by fetching its document, here served over https from this test process with a certificate
// for `localhost` made by openssl into a temporary directory. The stack's processes trust it through
// NODE_EXTRA_CA_CERTS, and reach 127.0.0.1 because ROUTER_ALLOW_PRIVATE_TARGETS=true (the SSRF guard's test and
// development switch; the production setting refuses it: tested below too). Covered: code + PKCE with such a
// client, the device endpoints naming it and its host, a document naming another client_id, an oversize, an
// unreachable, a 404 and an invalid document (each the unknown-client error of its endpoint), the document's cache
// lifetime (refetched once expired, at once with no-store) and the consent page saying the client is unverified and
// who publishes it.
import test from 'ava';
import { decodeJwt } from 'jose';
import { OAuthClient } from '../../shared/db/entities/index.js';
import {
  DEFAULT_DOCUMENT_TTL_SECS,
  documentTtlSecs,
  fetchClientMetadata,
  isMetadataDocumentId,
} from '../../shared/oauth/client-metadata-document.js';
import { type Served, httpsDocuments } from '../support/https-documents.js';
import { forEachDb } from '../support/matrix.js';
import { ISSUER, REDIRECT_URI, pkce, postForm } from '../support/oauth.js';
import type { Stack } from '../support/stack.js';

// The client's site: documents over https from this process (test/support/https-documents.ts).
const docs = await httpsDocuments();
test.after.always(() => docs.close());
const port = new URL(docs.origin).port;

let n = 0;
/** A fresh document URL (each test its own), served with `doc` (its client_id this URL unless given). */
function publish(doc: Record<string, unknown> = {}, served: Omit<Served, 'body'> = {}): string {
  n += 1;
  const url = `${docs.origin}/clients/${n}/metadata.json`;
  docs.serve(url, { client_id: url, client_name: 'Hosted MCP client', redirect_uris: [REDIRECT_URI], ...doc }, served);
  return url;
}
const serve = (url: string, doc: unknown, served: Omit<Served, 'body'> = {}): void => docs.serve(url, doc, served);
const fetchCount = (url: string) => docs.fetchCount(url);

async function authorize(s: Stack, apiKey: string, clientId: string, extra: Record<string, unknown> = {}) {
  const p = await pkce();
  const r = await fetch(`${s.proxyUrl}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      ...extra,
    }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, verifier: p.verifier };
}

/** A browser signed in as `apiKey`: its page cookie (as test/pages/page-csrf.test.ts signs in). */
async function signIn(s: Stack, apiKey: string): Promise<string> {
  const first = await fetch(`${s.proxyUrl}/device`, { redirect: 'manual' });
  const cookie = /payroute_page=([A-Za-z0-9_-]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const csrf = /name="csrf" value="([A-Za-z0-9_-]+)"/.exec(await first.text())?.[1] ?? '';
  const r = await fetch(`${s.proxyUrl}/oauth/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `payroute_page=${cookie}` },
    body: new URLSearchParams({ csrf, return_to: '/device', api_key: apiKey }).toString(),
  });
  return /payroute_page=([A-Za-z0-9_-]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1] ?? cookie;
}

forEachDb(({ stack, test }) => {
  test('a metadata-document client through code + PKCE: fetched once, stored unverified and commerce only', async (t) => {
    const s = stack();
    const u = await s.user();
    const clientId = publish({ token_endpoint_auth_method: 'none' });
    const approved = await authorize(s, u.apiKey, clientId, { resource: `${ISSUER}/mcp` });
    t.is(approved.status, 201, JSON.stringify(approved.body));
    const tokens = await postForm(s, '/oauth/token', {
      grant_type: 'authorization_code',
      client_id: clientId,
      code: String(approved.body.code),
      redirect_uri: REDIRECT_URI,
      code_verifier: approved.verifier,
    });
    t.is(tokens.status, 200, JSON.stringify(tokens.body));
    const claims = decodeJwt(String(tokens.body.access_token));
    t.is(claims.client_id, clientId);
    t.is(claims.aud, `${ISSUER}/mcp`);
    // Within the document's lifetime (5 minutes by default) the stored copy is used.
    t.is(fetchCount(clientId), 1);
    const row = await s.ctx.db.em().findOneOrFail(OAuthClient, { clientId });
    t.is(row.registration, 'metadata_document');
    t.false(row.verified);
    t.false(row.accountLevel);
    t.is(row.allowedConsentTypes, '["commerce"]');
    t.is(row.name, 'Hosted MCP client');
    const ttl = (row.metadataExpiresAt?.getTime() ?? 0) - Date.now();
    t.true(ttl > 0 && ttl <= DEFAULT_DOCUMENT_TTL_SECS * 1000, String(ttl));
    // Never account-level, whatever it asks.
    t.is((await authorize(s, u.apiKey, clientId, { scope: 'account_access' })).body.code, 'BCK.OAUTH.0018');
    // The device flow names it too, and the human sees it unverified, with its host.
    const started = await postForm(s, '/oauth/device_authorization', { client_id: clientId });
    t.is(started.status, 200, JSON.stringify(started.body));
    const details = await fetch(`${s.proxyUrl}/oauth/device/details`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${u.apiKey}` },
      body: JSON.stringify({ user_code: started.body.user_code }),
    });
    const d = (await details.json()) as Record<string, unknown>;
    t.is(d.verified, false);
    t.is(d.publisher, `localhost:${port}`);
    // The connect details and revocation accept it as well.
    const connect = await fetch(`${s.proxyUrl}/oauth/connect/details`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${u.apiKey}` },
      body: JSON.stringify({ client_id: clientId }),
    });
    t.is(connect.status, 200);
    const revoked = await postForm(s, '/oauth/revoke', {
      token: String(tokens.body.refresh_token),
      client_id: clientId,
    });
    t.is(revoked.status, 200);
  });

  test('a document that cannot be had or is not this client is the unknown client of each endpoint', async (t) => {
    const s = stack();
    const u = await s.user();
    const oversize = publish({ padding: 'x'.repeat(6 * 1024) });
    const other = publish();
    const cases: [string, string][] = [
      [publish({ client_id: `https://localhost:${port}/clients/someone-else.json` }), 'another client_id'],
      [oversize, 'larger than 5 KB'],
      [publish({ token_endpoint_auth_method: 'private_key_jwt' }), 'a confidential client'],
      [publish({ redirect_uris: ['http://evil.example/cb'] }), 'an http redirect URI to another host'],
      [publish({ client_name: undefined }), 'no client_name'],
      [publish({}, { status: 500 }), 'a 500'],
      [`https://localhost:${port}/clients/none.json`, 'a 404'],
      [`https://127.0.0.1:1/clients/x.json`, 'unreachable'],
    ];
    serve(other, 'not an object');
    cases.push([other, 'not a document']);
    for (const [clientId, what] of cases) {
      const a = await authorize(s, u.apiKey, clientId);
      t.is(a.status, 400, what);
      t.is(a.body.code, 'BCK.OAUTH.0016', what);
      const d = await postForm(s, '/oauth/device_authorization', { client_id: clientId });
      t.is(d.status, 401, what);
      t.is(d.body.error, 'invalid_client', what);
      const tk = await postForm(s, '/oauth/token', {
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: 'x',
      });
      t.is(tk.body.error, 'invalid_client', what);
    }
    t.is(await s.ctx.db.em().count(OAuthClient, { clientId: { $in: cases.map(([c]) => c) } }), 0);
    // The oversize document was asked for and refused at the cap.
    t.true(fetchCount(oversize) >= 1);
  });

  test('the document is fetched again once its lifetime is over, so its changes take effect (at once with no-store)', async (t) => {
    const s = stack();
    const u = await s.user();
    const second = 'http://127.0.0.1:8765/second';
    // max-age: the stored copy is used until it expires.
    const cached = publish({ redirect_uris: [REDIRECT_URI, second] }, { headers: { 'cache-control': 'max-age=3600' } });
    t.is((await authorize(s, u.apiKey, cached, { redirect_uri: second })).status, 201);
    serve(cached, { client_id: cached, client_name: 'Renamed', redirect_uris: [REDIRECT_URI] });
    t.is((await authorize(s, u.apiKey, cached, { redirect_uri: second })).status, 201, 'still the stored copy');
    t.is(fetchCount(cached), 1);
    const row = await s.ctx.db.em().findOneOrFail(OAuthClient, { clientId: cached });
    const ttl = (row.metadataExpiresAt?.getTime() ?? 0) - Date.now();
    t.true(ttl > 3000_000 && ttl <= 3600_000, String(ttl));
    // Its lifetime over (as an hour later), the next use fetches it: the removed redirect URI is refused.
    await s.ctx.db
      .em()
      .nativeUpdate(OAuthClient, { clientId: cached }, { metadataExpiresAt: new Date(Date.now() - 1000) });
    const removed = await authorize(s, u.apiKey, cached, { redirect_uri: second });
    t.is(removed.status, 400);
    t.is(removed.body.code, 'BCK.OAUTH.0017');
    t.is(fetchCount(cached), 2);
    t.is((await s.ctx.db.em().findOneOrFail(OAuthClient, { clientId: cached })).name, 'Renamed');

    // no-store: every use fetches it.
    const uncached = publish({}, { headers: { 'cache-control': 'no-store' } });
    t.is((await authorize(s, u.apiKey, uncached)).status, 201);
    t.is((await authorize(s, u.apiKey, uncached)).status, 201);
    t.is(fetchCount(uncached), 2);
    // A document gone: the client is unknown at its next use.
    docs.remove(uncached);
    t.is((await authorize(s, u.apiKey, uncached)).body.code, 'BCK.OAUTH.0016');
  });

  test('the consent page says a metadata-document client is unverified and names its host', async (t) => {
    const s = stack();
    const u = await s.user();
    const clientId = publish({ client_name: 'Hosted Helper' });
    const cookie = await signIn(s, u.apiKey);
    const p = await pkce();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: `${ISSUER}/mcp`,
    });
    const r = await fetch(`${s.proxyUrl}/oauth/authorize?${query.toString()}`, {
      headers: { cookie: `payroute_page=${cookie}` },
      redirect: 'manual',
    });
    const page = await r.text();
    t.is(r.status, 200, page.slice(0, 300));
    t.regex(page, /Hosted Helper/);
    t.regex(page, /Unverified connector/);
    t.true(page.includes(`localhost:${port}`));
    // The default terms: commerce, $10, a day.
    t.regex(page, /commerce/);
  });

  test('the production setting (ROUTER_ALLOW_PRIVATE_TARGETS=false) refuses a document on a private address, unsent', async (t) => {
    const s = stack();
    const url = publish();
    const production = { ...s.ctx, config: { ...s.ctx.config, ROUTER_ALLOW_PRIVATE_TARGETS: false } };
    t.is(await fetchClientMetadata(production, url), undefined);
    t.is(await fetchClientMetadata(production, url.replace('localhost', '127.0.0.1')), undefined);
    t.is(fetchCount(url), 0);
  });
}, docs.stackEnv);

test('which client ids name a metadata document, and how long a document is kept', (t) => {
  for (const id of ['https://host.example/client.json', 'https://host.example:8443/a/b?x=1']) {
    t.true(isMetadataDocumentId(id), id);
  }
  for (const id of [
    'https://host.example',
    'https://host.example/',
    'http://host.example/client.json',
    'https://host.example/client.json#frag',
    'https://user:pw@host.example/client.json',
    'https://host.example/a/../client.json',
    'https://HOST.example/client.json',
    'abcdefghijklmnop',
    `https://host.example/${'a'.repeat(200)}`,
  ]) {
    t.false(isMetadataDocumentId(id), id);
  }
  t.is(documentTtlSecs(undefined), DEFAULT_DOCUMENT_TTL_SECS);
  t.is(documentTtlSecs('no-store'), 0);
  t.is(documentTtlSecs('public, no-cache'), 0);
  t.is(documentTtlSecs('max-age=5'), 60);
  t.is(documentTtlSecs('public, max-age=600'), 600);
  t.is(documentTtlSecs('max-age=99999999'), 86_400);
  t.is(documentTtlSecs(['public', 'max-age=120']), 120);
});
