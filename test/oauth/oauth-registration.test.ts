// RFC 7591 dynamic client registration over HTTP, through the proxy front door: a registration and the RFC 7591
// §3.2.1 answer; the client it makes (public, unverified, commerce only) through code + PKCE; each refusal as an
// RFC 7591 §3.2.2 body with nothing stored; the per-address limit (429 with Retry-After, nothing stored); and the
// off switch (404, no registration_endpoint); the purge of unused dynamic clients. The tests run in order: the
// third uses up 127.0.0.1's window.
import { decodeJwt } from 'jose';
import { OAuthClient } from '../../shared/db/entities/index.js';
import { purgeOAuth } from '../../shared/oauth/purge.js';
import { registerClient } from '../../shared/oauth/registration.js';
import { forEachDb } from '../support/matrix.js';
import { ISSUER, pkce, postForm } from '../support/oauth.js';
import type { Stack } from '../support/stack.js';

const CALLBACK = 'https://host.example/oauth/callback';

async function register(
  base: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const r = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
}

const dynamicClients = (s: Stack) => s.ctx.db.em().count(OAuthClient, { registration: 'dynamic' });

forEachDb(
  ({ stack, test }) => {
    test('a registration answers the client as registered; it is public, unverified, commerce only, and works through code + PKCE', async (t) => {
      const s = stack();
      const r = await register(s.proxyUrl, {
        client_name: 'Some MCP host',
        redirect_uris: [CALLBACK, 'http://127.0.0.1:33418/callback', CALLBACK],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        logo_uri: 'https://host.example/logo.png',
      });
      t.is(r.status, 201, JSON.stringify(r.body));
      t.is(r.headers.get('cache-control'), 'no-store');
      const clientId = String(r.body.client_id);
      t.deepEqual(r.body, {
        client_id: clientId,
        client_id_issued_at: r.body.client_id_issued_at,
        client_name: 'Some MCP host',
        redirect_uris: [CALLBACK, 'http://127.0.0.1:33418/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'commerce',
      });
      t.true(Math.abs(Number(r.body.client_id_issued_at) - Date.now() / 1000) < 300);
      const row = await s.ctx.db.em().findOneOrFail(OAuthClient, { clientId });
      t.is(row.registration, 'dynamic');
      t.false(row.verified);
      t.false(row.accountLevel);
      t.is(row.allowedConsentTypes, '["commerce"]');

      // The new client asks for consent with the MCP resource and no scope, and redeems the code.
      const u = await s.user();
      const p = await pkce();
      const authorize = (extra: Record<string, unknown>) =>
        fetch(`${s.proxyUrl}/oauth/authorize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${u.apiKey}` },
          body: JSON.stringify({
            client_id: clientId,
            redirect_uri: CALLBACK,
            code_challenge: p.challenge,
            code_challenge_method: 'S256',
            ...extra,
          }),
        });
      const approved = await authorize({ resource: `${ISSUER}/mcp` });
      t.is(approved.status, 201);
      const code = String(((await approved.json()) as { code: string }).code);
      const tokens = await postForm(s, '/oauth/token', {
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: CALLBACK,
        code_verifier: p.verifier,
      });
      t.is(tokens.status, 200, JSON.stringify(tokens.body));
      t.is(decodeJwt(String(tokens.body.access_token)).aud, `${ISSUER}/mcp`);
      // Never account-level: it registered itself.
      const account = await authorize({ scope: 'account_access' });
      t.is(account.status, 400);
      t.is(((await account.json()) as { code: string }).code, 'BCK.OAUTH.0018');
    });

    test('each refusal is an RFC 7591 §3.2.2 body, 400, and stores nothing', async (t) => {
      const s = stack();
      const ok = { client_name: 'Host', redirect_uris: [CALLBACK] };
      const cases: [unknown, string][] = [
        [{ ...ok, redirect_uris: undefined }, 'invalid_redirect_uri'],
        [{ ...ok, redirect_uris: [] }, 'invalid_redirect_uri'],
        [{ ...ok, redirect_uris: 'https://host.example/cb' }, 'invalid_redirect_uri'],
        [{ ...ok, redirect_uris: ['http://host.example/cb'] }, 'invalid_redirect_uri'],
        [{ ...ok, redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri'],
        [{ ...ok, redirect_uris: ['https://host.example/cb#x'] }, 'invalid_redirect_uri'],
        [{ ...ok, redirect_uris: [CALLBACK, 'javascript:alert(1)'] }, 'invalid_redirect_uri'],
        [{ ...ok, client_name: undefined }, 'invalid_client_metadata'],
        [{ ...ok, client_name: '   ' }, 'invalid_client_metadata'],
        [{ ...ok, token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
        [{ ...ok, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
        [{ ...ok, grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
        [{ ...ok, grant_types: ['implicit', 'authorization_code'] }, 'invalid_client_metadata'],
        [{ ...ok, response_types: ['token'] }, 'invalid_client_metadata'],
        [{ ...ok, scope: 'account_access' }, 'invalid_client_metadata'],
        [{ ...ok, scope: 'commerce account_access' }, 'invalid_client_metadata'],
        [[ok], 'invalid_client_metadata'],
        ['a string', 'invalid_client_metadata'],
      ];
      const before = await dynamicClients(s);
      for (const [body, error] of cases) {
        const r = await register(s.proxyUrl, body);
        t.is(r.status, 400, JSON.stringify(body));
        t.is(r.body.error, error, JSON.stringify(body));
        t.is(typeof r.body.error_description, 'string');
      }
      t.is(await dynamicClients(s), before);
    });

    test('past OAUTH_REGISTRATION_LIMIT_PER_ADDRESS registrations in the window: 429 with Retry-After, nothing stored', async (t) => {
      const s = stack();
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<typeof register>> | undefined;
      for (let i = 0; i < 25 && refused === undefined; i++) {
        const r = await register(s.proxyUrl, { client_name: `Host ${i}`, redirect_uris: [CALLBACK] });
        statuses.push(r.status);
        if (r.status === 429) refused = r;
      }
      // The file's registrations so far all came from 127.0.0.1: the limit is 20 per window in all.
      t.is(await dynamicClients(s), 20);
      t.truthy(refused);
      t.is(refused?.body.error, 'temporarily_unavailable');
      const retryAfter = Number(refused?.headers.get('retry-after'));
      t.true(retryAfter >= 1 && retryAfter <= 600, String(retryAfter));
      t.is((await register(s.proxyUrl, { client_name: 'One more', redirect_uris: [CALLBACK] })).status, 429);
      t.is(await dynamicClients(s), 20);
    });

    test('OAUTH_DYNAMIC_REGISTRATION=false: /oauth/register is 404 and the metadata has no registration_endpoint', async (t) => {
      const off = await stack().spawn('admin', { OAUTH_DYNAMIC_REGISTRATION: 'false' });
      try {
        const r = await register(off.url, { client_name: 'Host', redirect_uris: [CALLBACK] });
        t.is(r.status, 404);
        t.is(r.body.code, 'BCK.HTTP.0404');
        const metadata = (await (await fetch(`${off.url}/.well-known/oauth-authorization-server`)).json()) as Record<
          string,
          unknown
        >;
        t.false('registration_endpoint' in metadata);
        t.true(metadata.client_id_metadata_document_supported);
      } finally {
        await off.stop();
      }
    });

    test('the purge deletes dynamic clients a day old that never got a grant, and keeps those with one', async (t) => {
      const s = stack();
      const u = await s.user();
      const metadata = { client_name: 'Purged host', redirect_uris: [CALLBACK] };
      const unused = await registerClient(s.ctx, metadata, '192.0.2.7');
      const used = await registerClient(s.ctx, metadata, '192.0.2.7');
      const p = await pkce();
      const approved = await fetch(`${s.proxyUrl}/oauth/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${u.apiKey}` },
        body: JSON.stringify({
          client_id: used.client_id,
          redirect_uri: CALLBACK,
          code_challenge: p.challenge,
          code_challenge_method: 'S256',
        }),
      });
      t.is(approved.status, 201);
      const exists = async (clientId: string) => (await s.ctx.db.em().count(OAuthClient, { clientId })) === 1;
      // Not a day old yet: both stay.
      await purgeOAuth(s.ctx, new Date(Date.now() + 3_600_000));
      t.true(await exists(unused.client_id));
      // A day and an hour later: the unused one is gone, the one with a grant stays.
      await purgeOAuth(s.ctx, new Date(Date.now() + 25 * 3_600_000));
      t.false(await exists(unused.client_id));
      t.true(await exists(used.client_id));
    });
  },
  { OAUTH_REGISTRATION_LIMIT_PER_ADDRESS: '20' },
  { serial: true },
);
