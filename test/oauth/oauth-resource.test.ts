// Resource indicators (RFC 8707) over HTTP, through the proxy front door: the `resource` of an authorization
// request (JSON endpoint and consent page), of a device authorization and of a token request; the `aud` of the
// tokens issued for each resource through the code, device and refresh grants (a rotation keeps it); a resource
// this service does not serve, several resources, or another resource than the authorized one, refused as
// invalid_target on each endpoint (the consent page redirects it to the connector before any sign-in); the MCP
// resource refused for account_access; a request without scope asking for commerce on the default terms; and the
// revocation endpoint revoking through an access token of either resource.
import { decodeJwt } from 'jose';
import { forEachDb } from '../support/matrix.js';
import {
  DEVICE_GRANT_TYPE,
  ISSUER,
  REDIRECT_URI,
  approve,
  authorizeBody,
  codeForm,
  connector,
  pkce,
  postForm,
  refreshForm,
} from '../support/oauth.js';
import type { Stack } from '../support/stack.js';

const API = `${ISSUER}/api/v1`;
const MCP = `${ISSUER}/mcp`;

/** A device authorization approved by `apiKey`, and its device code. */
async function approvedDevice(s: Stack, apiKey: string, form: Record<string, string>) {
  const started = await postForm(s, '/oauth/device_authorization', form);
  if (started.status !== 200)
    throw new Error(`device_authorization: ${started.status} ${JSON.stringify(started.body)}`);
  const decided = await fetch(`${s.proxyUrl}/oauth/device`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ user_code: started.body.user_code, approve: true }),
  });
  if (decided.status !== 204) throw new Error(`device decision: ${decided.status}`);
  return String(started.body.device_code);
}

forEachDb(
  ({ stack, test }) => {
    test('the code grant: aud is the API by default or as named, the MCP endpoint as named; refresh keeps it', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      for (const [resource, aud] of [
        [undefined, API],
        [API, API],
        [MCP, MCP],
      ] as const) {
        const p = await pkce();
        const approved = await approve(s, u.apiKey, authorizeBody(c, p, { resource }));
        t.is(approved.status, 201, JSON.stringify(approved.body));
        const redeemed = await postForm(s, '/oauth/token', {
          ...codeForm(c, String(approved.body.code), p.verifier),
          ...(resource === undefined ? {} : { resource }),
        });
        t.is(redeemed.status, 200, JSON.stringify(redeemed.body));
        t.is(decodeJwt(String(redeemed.body.access_token)).aud, aud, String(resource));
        // A refresh (naming no resource, then the same one) keeps the audience.
        const refreshed = await postForm(s, '/oauth/token', refreshForm(c, String(redeemed.body.refresh_token)));
        t.is(refreshed.status, 200);
        t.is(decodeJwt(String(refreshed.body.access_token)).aud, aud);
        const again = await postForm(s, '/oauth/token', {
          ...refreshForm(c, String(refreshed.body.refresh_token)),
          resource: aud,
        });
        t.is(again.status, 200);
        t.is(decodeJwt(String(again.body.access_token)).aud, aud);
      }
    });

    test('the token endpoint refuses another resource than the authorized one, or an unknown one: invalid_target', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const p = await pkce();
      const code = String((await approve(s, u.apiKey, authorizeBody(c, p, { resource: MCP }))).body.code);
      for (const resource of [API, `${ISSUER}/mcp/`, 'https://elsewhere.example/mcp']) {
        const r = await postForm(s, '/oauth/token', { ...codeForm(c, code, p.verifier), resource });
        t.is(r.status, 400, resource);
        t.is(r.body.error, 'invalid_target', resource);
        t.is(r.headers.get('cache-control'), 'no-store');
      }
      // Several resources (a repeated form field): refused, not guessed between.
      const repeated = await fetch(`${s.proxyUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `${new URLSearchParams(codeForm(c, code, p.verifier)).toString()}&resource=${encodeURIComponent(MCP)}&resource=${encodeURIComponent(MCP)}`,
      });
      t.is(repeated.status, 400);
      t.is(((await repeated.json()) as { error: string }).error, 'invalid_target');
      // None of them consumed the code: the right resource still redeems it.
      const ok = await postForm(s, '/oauth/token', { ...codeForm(c, code, p.verifier), resource: MCP });
      t.is(ok.status, 200);
      t.is(decodeJwt(String(ok.body.access_token)).aud, MCP);
      // A refresh naming the API for the MCP grant.
      const r = await postForm(s, '/oauth/token', { ...refreshForm(c, String(ok.body.refresh_token)), resource: API });
      t.is(r.body.error, 'invalid_target');
    });

    test('the JSON authorize endpoint: an unknown or repeated resource is 400 BCK.OAUTH.0040; account_access at the MCP resource is refused', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const p = await pkce();
      for (const resource of [`${ISSUER}/api/v2`, 'http://payroute.test/API/v1', [MCP, API], [MCP, MCP], 42]) {
        const r = await approve(s, u.apiKey, authorizeBody(c, p, { resource }));
        t.is(r.status, 400, JSON.stringify(resource));
        t.is(r.body.code, 'BCK.OAUTH.0040', JSON.stringify(resource));
      }
      const account = await approve(s, u.apiKey, authorizeBody(c, p, { resource: MCP, scope: 'account_access' }));
      t.is(account.status, 400);
      t.is(account.body.code, 'BCK.OAUTH.0018');
      // The same client may ask for account_access at the API.
      t.is((await approve(s, u.apiKey, authorizeBody(c, p, { scope: 'account_access' }))).status, 201);
    });

    test('a request without scope or terms asks for commerce on the default terms ($10 for a day)', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const p = await pkce();
      const body = authorizeBody(c, p, {
        scope: undefined,
        spending_limit_cents: undefined,
        currency: undefined,
        duration_secs: undefined,
        resource: MCP,
      });
      const approved = await approve(s, u.apiKey, body);
      t.is(approved.status, 201, JSON.stringify(approved.body));
      const tokens = await postForm(s, '/oauth/token', codeForm(c, String(approved.body.code), p.verifier));
      t.is(tokens.body.scope, 'commerce');
      const bindings = (await (
        await fetch(`${s.proxyUrl}/oauth/bindings?page=1&offset=100`, {
          headers: { authorization: `Bearer ${u.apiKey}` },
        })
      ).json()) as { bindings: Record<string, unknown>[] };
      const grantId = String(decodeJwt(String(tokens.body.access_token)).grant_id);
      const binding = bindings.bindings.find((b) => b.bindingId === grantId);
      t.truthy(binding);
      t.is(binding?.consentType, 'commerce');
      t.is(binding?.spendingLimitCents, '1000');
      t.is(binding?.currency, 'usd');
      // The device endpoint too: no scope is commerce.
      const device = await postForm(s, '/oauth/device_authorization', { client_id: c.registration.clientId });
      t.is(device.status, 200, JSON.stringify(device.body));
    });

    test('the device grant: resource at the device endpoint sets aud; invalid_target there and at the token endpoint', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const clientId = c.registration.clientId;
      for (const [resource, aud] of [
        [undefined, API],
        [MCP, MCP],
      ] as const) {
        const deviceCode = await approvedDevice(s, u.apiKey, {
          client_id: clientId,
          scope: 'commerce',
          ...(resource === undefined ? {} : { resource }),
        });
        // Another resource at the token endpoint is refused, before the poll counts.
        const other = await postForm(s, '/oauth/token', {
          grant_type: DEVICE_GRANT_TYPE,
          client_id: clientId,
          device_code: deviceCode,
          resource: aud === API ? MCP : API,
        });
        t.is(other.status, 400);
        t.is(other.body.error, 'invalid_target');
        const r = await postForm(s, '/oauth/token', {
          grant_type: DEVICE_GRANT_TYPE,
          client_id: clientId,
          device_code: deviceCode,
        });
        t.is(r.status, 200, JSON.stringify(r.body));
        t.is(decodeJwt(String(r.body.access_token)).aud, aud);
        const refreshed = await postForm(s, '/oauth/token', refreshForm(c, String(r.body.refresh_token)));
        t.is(decodeJwt(String(refreshed.body.access_token)).aud, aud);
      }
      for (const [form, error] of [
        [{ client_id: clientId, scope: 'commerce', resource: 'https://elsewhere.example/' }, 'invalid_target'],
        [{ client_id: clientId, scope: 'account_access', resource: MCP }, 'invalid_scope'],
      ] as const) {
        const r = await postForm(s, '/oauth/device_authorization', form);
        t.is(r.status, 400, JSON.stringify(form));
        t.is(r.body.error, error, JSON.stringify(form));
      }
    });

    test('the consent page sends an unknown or repeated resource back to the connector as invalid_target, before sign-in', async (t) => {
      const s = stack();
      const c = await connector(s);
      const p = await pkce();
      const base = new URLSearchParams({
        response_type: 'code',
        client_id: c.registration.clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
        state: 'st-9',
      });
      for (const extra of [
        `resource=${encodeURIComponent('https://elsewhere.example/mcp')}`,
        `resource=${encodeURIComponent(MCP)}&resource=${encodeURIComponent(API)}`,
      ]) {
        // No cookie: the human is not signed in, and the page does not ask them to.
        const r = await fetch(`${s.proxyUrl}/oauth/authorize?${base.toString()}&${extra}`, { redirect: 'manual' });
        t.is(r.status, 303, extra);
        const to = new URL(r.headers.get('location') ?? '');
        t.is(`${to.origin}${to.pathname}`, REDIRECT_URI);
        t.is(to.searchParams.get('error'), 'invalid_target');
        t.is(to.searchParams.get('state'), 'st-9');
        t.is(to.searchParams.get('iss'), ISSUER);
      }
      // The MCP resource itself is fine: the page asks the human to sign in.
      const ok = await fetch(`${s.proxyUrl}/oauth/authorize?${base.toString()}&resource=${encodeURIComponent(MCP)}`, {
        redirect: 'manual',
      });
      t.is(ok.status, 200);
      t.regex(await ok.text(), /api_key/);
    });

    test('the consent page carries resource through the human decision: the code is for the MCP resource', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const p = await pkce();
      // Sign in as a browser does (test/pages/page-csrf.test.ts): the entry page's cookie and CSRF token.
      const entry = await fetch(`${s.proxyUrl}/device`, { redirect: 'manual' });
      const first = /payroute_page=([A-Za-z0-9_-]+)/.exec(entry.headers.get('set-cookie') ?? '')?.[1] ?? '';
      const entryCsrf = /name="csrf" value="([A-Za-z0-9_-]+)"/.exec(await entry.text())?.[1] ?? '';
      const signedIn = await fetch(`${s.proxyUrl}/oauth/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `payroute_page=${first}` },
        body: new URLSearchParams({ csrf: entryCsrf, return_to: '/device', api_key: u.apiKey }).toString(),
      });
      const cookie = /payroute_page=([A-Za-z0-9_-]+)/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1] ?? first;
      const request = {
        client_id: c.registration.clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
        state: 'st-7',
        resource: MCP,
      };
      const page = await fetch(
        `${s.proxyUrl}/oauth/authorize?${new URLSearchParams({ response_type: 'code', ...request }).toString()}`,
        { headers: { cookie: `payroute_page=${cookie}` }, redirect: 'manual' },
      );
      const html = await page.text();
      t.is(page.status, 200, html.slice(0, 300));
      // Without scope or terms: commerce, $10.00, a day.
      t.regex(html, /10\.00/);
      const csrf = /name="csrf" value="([A-Za-z0-9_-]+)"/.exec(html)?.[1] ?? '';
      const decided = await fetch(`${s.proxyUrl}/oauth/consent`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `payroute_page=${cookie}` },
        body: new URLSearchParams({ ...request, csrf, decision: 'approve' }).toString(),
      });
      t.is(decided.status, 303);
      const back = new URL(decided.headers.get('location') ?? '');
      t.is(back.searchParams.get('state'), 'st-7');
      const tokens = await postForm(s, '/oauth/token', codeForm(c, String(back.searchParams.get('code')), p.verifier));
      t.is(tokens.status, 200, JSON.stringify(tokens.body));
      t.is(decodeJwt(String(tokens.body.access_token)).aud, MCP);
      t.is(tokens.body.scope, 'commerce');
    });

    test('revocation with an access token of either resource revokes its grant', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      for (const resource of [API, MCP]) {
        const p = await pkce();
        const code = String((await approve(s, u.apiKey, authorizeBody(c, p, { resource }))).body.code);
        const tokens = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
        const revoked = await postForm(s, '/oauth/revoke', {
          token: String(tokens.body.access_token),
          client_id: c.registration.clientId,
        });
        t.is(revoked.status, 200);
        // The grant is gone: its refresh token no longer works.
        const r = await postForm(s, '/oauth/token', refreshForm(c, String(tokens.body.refresh_token)));
        t.is(r.body.error, 'invalid_grant', resource);
      }
    });
  },
  { OAUTH_DEVICE_POLL_INTERVAL_SECS: '1' },
);
