// OAuth discovery: the authorization server's metadata (RFC 8414) and the API's protected-resource metadata
// (RFC 9728), public, through the proxy front door; a 401 from the API points at the latter (RFC 6750 §3).
// A certified client library (panva's openid-client) discovers the server from these documents as a connector
// would: the interoperability proof that the fields, the issuer and the endpoints agree.
import test from 'ava';
import * as client from 'openid-client';
import { loadConfig } from '../../config/index.js';
import { authorizationServerMetadata } from '../../shared/oauth/metadata.js';
import { forEachDb } from '../support/matrix.js';

const ISSUER = 'http://payroute.test'; // the stack's PUBLIC_URL

const expectedMetadata = (webApp: string) => ({
  issuer: ISSUER,
  authorization_endpoint: `${webApp}/oauth/authorize?network=eip155%3A84532`,
  token_endpoint: `${ISSUER}/oauth/token`,
  device_authorization_endpoint: `${ISSUER}/oauth/device_authorization`,
  revocation_endpoint: `${ISSUER}/oauth/revoke`,
  jwks_uri: `${ISSUER}/.well-known/jwks.json`,
  grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none'],
  // The stacks run in sandbox, where dynamic registration is on by default.
  registration_endpoint: `${ISSUER}/oauth/register`,
  client_id_metadata_document_supported: true,
});

const RESOURCE_METADATA = {
  resource: `${ISSUER}/api/v1`,
  authorization_servers: [ISSUER],
  bearer_methods_supported: ['header'],
};

const CHALLENGE = `Bearer resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`;

forEachDb(({ stack, test }) => {
  test('the authorization server metadata is public, exact, and never lists scopes', async (t) => {
    for (const base of [stack().proxyUrl, stack().adminUrl]) {
      const r = await fetch(`${base}/.well-known/oauth-authorization-server`);
      t.is(r.status, 200);
      t.regex(r.headers.get('content-type') ?? '', /^application\/json/);
      t.is(r.headers.get('cache-control'), 'public, max-age=300');
      const body = (await r.json()) as Record<string, unknown>;
      t.deepEqual(body, expectedMetadata(ISSUER));
      t.false('scopes_supported' in body);
    }
  });

  test('the protected-resource metadata is served at the root and at its RFC 9728 location', async (t) => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/v1']) {
      const r = await fetch(`${stack().proxyUrl}${path}`);
      t.is(r.status, 200, path);
      t.deepEqual(await r.json(), RESOURCE_METADATA);
    }
    // The MCP endpoint's, at its own RFC 9728 §3.1 location, cached as the others.
    const mcp = await fetch(`${stack().proxyUrl}/.well-known/oauth-protected-resource/mcp`);
    t.is(mcp.status, 200);
    t.is(mcp.headers.get('cache-control'), 'public, max-age=300');
    t.deepEqual(await mcp.json(), { ...RESOURCE_METADATA, resource: `${ISSUER}/mcp` });
    // Exact paths only, as every route: no trailing-slash or case variant.
    t.is((await fetch(`${stack().proxyUrl}/.well-known/oauth-protected-resource/`)).status, 404);
    t.is((await fetch(`${stack().proxyUrl}/.well-known/OAuth-Authorization-Server`)).status, 404);
  });

  test('a 401 from either process carries the Bearer challenge naming the resource metadata', async (t) => {
    const cases: [string, string, RequestInit][] = [
      ['proxy -> admin route', `${stack().baseUrl}/protocol/agents`, {}],
      ['admin port', `${stack().adminUrl}/api/v1/protocol/plans`, {}],
      ['router route', `${stack().baseUrl}/router/payments`, { method: 'GET' }],
      ['bad key', `${stack().baseUrl}/delegation`, { headers: { authorization: 'Bearer sandbox:nope' } }],
      ['unmatched API path', `${stack().baseUrl}/no/such/route`, {}],
    ];
    for (const [name, url, init] of cases) {
      const r = await fetch(url, init);
      t.is(r.status, 401, name);
      t.is(((await r.json()) as { code: string }).code, 'BCK.AUTH.0001', name);
      t.is(r.headers.get('www-authenticate'), CHALLENGE, name);
    }
    // A refusal that is not about the credential has no challenge.
    const u = await stack().user();
    const r = await fetch(`${stack().baseUrl}/protocol/plans/not-a-plan`, {
      headers: { authorization: `Bearer ${u.apiKey}` },
    });
    t.true(r.status >= 400 && r.status < 500);
    t.is(r.headers.get('www-authenticate'), null);
  });

  test('openid-client discovers the server from the metadata (RFC 8414 issuer check included)', async (t) => {
    // The issuer is the public URL; requests to it are sent to this stack's proxy.
    const toProxy: client.CustomFetch = (url, options) =>
      fetch(url.replace(ISSUER, stack().proxyUrl), options as RequestInit);
    const config = await client.discovery(new URL(ISSUER), 'any-client', undefined, client.None(), {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
      [client.customFetch]: toProxy,
    });
    const m = config.serverMetadata();
    t.is(m.issuer, ISSUER);
    t.is(m.token_endpoint, `${ISSUER}/oauth/token`);
    t.true(m.supportsPKCE());
    t.deepEqual(m.code_challenge_methods_supported, ['S256']);
  });
});

forEachDb(
  ({ stack, test }) => {
    test('WEB_APP_URL moves only the authorization endpoint (the consent page) to the web app host', async (t) => {
      const r = await fetch(`${stack().proxyUrl}/.well-known/oauth-authorization-server`);
      t.deepEqual(await r.json(), expectedMetadata('https://app.payroute.test'));
    });
  },
  { WEB_APP_URL: 'https://app.payroute.test/' },
);

test('live names its own network; WEB_APP_URL must be http(s)', (t) => {
  const live = loadConfig({
    ENVIRONMENT: 'live',
    SECRETS_KEY: 'x'.repeat(32),
    PUBLIC_URL: 'https://pay.example',
    RPC_URL_8453: 'https://base-rpc.example',
  });
  t.is(
    authorizationServerMetadata(live).authorization_endpoint,
    'https://pay.example/oauth/authorize?network=eip155%3A8453',
  );
  t.throws(() => loadConfig({ WEB_APP_URL: 'javascript:alert(1)' }), { message: /WEB_APP_URL/ });
  // Live registers no client dynamically unless the operator says so; sandbox does unless told not to.
  t.false('registration_endpoint' in authorizationServerMetadata(live));
  t.true(authorizationServerMetadata(live).client_id_metadata_document_supported);
  const liveOn = loadConfig({
    ENVIRONMENT: 'live',
    SECRETS_KEY: 'x'.repeat(32),
    PUBLIC_URL: 'https://pay.example',
    RPC_URL_8453: 'https://base-rpc.example',
    OAUTH_DYNAMIC_REGISTRATION: 'true',
  });
  t.is(authorizationServerMetadata(liveOn).registration_endpoint, 'https://pay.example/oauth/register');
  t.false('registration_endpoint' in authorizationServerMetadata(loadConfig({ OAUTH_DYNAMIC_REGISTRATION: 'false' })));
  t.true(loadConfig({}).oauthDynamicRegistration);
});
