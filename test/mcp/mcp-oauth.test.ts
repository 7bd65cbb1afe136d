// An MCP host as the MCP authorization specification has it, with the official SDK client (Client +
// StreamableHTTPClientTransport + an OAuthClientProvider): it starts with nothing, follows /mcp's 401 to the
// protected-resource metadata (RFC 9728) and the authorization server's (RFC 8414), registers itself (RFC 7591),
// sends its human to the consent page with code + PKCE and `resource` (RFC 8707), and calls the tools with the
// token it gets. The human approves in headless Chromium on SQLite and through the JSON authorize on PostgreSQL.
// Then: an expired access token is refreshed by the client on its own, and revoking the binding stops the next call.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import test, { type ExecutionContext } from 'ava';
import { decodeJwt } from 'jose';
import { OAuthClient, RouterPayment } from '../../shared/db/entities/index.js';
import {
  CHROMIUM_MISSING,
  chromiumAvailable,
  closeBrowser,
  launchBrowser,
  newContext,
  newPage,
} from '../support/browser.js';
import { DB_KINDS } from '../support/databases.js';
import { dbAvailable, registerOn } from '../support/matrix.js';
import { approve, expiredAndForged } from '../support/oauth.js';
import { httpsDocuments } from '../support/https-documents.js';
import { freePort } from '../support/ports.js';
import { type Merchants, PAID_ENV, fundedUser, startMerchants } from '../support/router-fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

/** The host's side of OAuth, kept in memory as a desktop host keeps it in its settings. */
class HostProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  /** An https URL: the host is named by its Client ID Metadata Document there, instead of registering. */
  clientMetadataUrl?: string;
  constructor(
    readonly redirect: string,
    metadataUrl?: string,
  ) {
    if (metadataUrl !== undefined) this.clientMetadataUrl = metadataUrl;
  }
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: 'Test MCP host',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The host's redirect URI: a loopback page (RFC 8252 §7.3) that only says it got the answer. */
async function callbackSite(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>host</title><p>back at the host</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let m: Merchants;
/** The site of a host that publishes its Client ID Metadata Document. */
const docs = await httpsDocuments();
test.before(async () => {
  m = await startMerchants(10_000n);
});
test.after.always(async () => {
  await Promise.all([m?.close(), docs.close()]);
});

for (const kind of DB_KINDS) {
  const register = registerOn(kind, { serial: true });
  const byBrowser = kind === 'sqlite';
  let s: Stack | undefined;
  let base = '';
  let site: Awaited<ReturnType<typeof callbackSite>> | undefined;
  test.before(async () => {
    // The stack's public URL is its own address, as a host reaching it directly sees it (the discovery documents
    // and the resource identifiers are built from it).
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    site = await callbackSite();
    if (dbAvailable(kind))
      s = await startStack(kind, {
        ...PAID_ENV,
        ...docs.stackEnv,
        PROXY_PORT: String(port),
        PUBLIC_URL: base,
        WEB_APP_URL: base,
      });
  });
  test.after.always(async () => {
    await Promise.all([s?.stop(), site?.close()]);
  });

  const stackOf = (): Stack => {
    if (s === undefined) throw new Error('stack not started');
    return s;
  };

  /** The human's approval of the authorization URL the host opened; the code it redirects back with. */
  async function humanApproves(url: URL, apiKey: string): Promise<string> {
    if (!byBrowser) {
      const approved = await approve(stackOf(), apiKey, {
        ...Object.fromEntries(url.searchParams),
        spending_limit_cents: 40,
        currency: 'usd',
        duration_secs: 3600,
      });
      if (approved.status !== 201) throw new Error(`authorize: ${approved.status} ${JSON.stringify(approved.body)}`);
      return String(approved.body.code);
    }
    const browser = await launchBrowser();
    const context = await newContext(browser);
    try {
      const page = await newPage(context);
      await page.goto(url.href);
      await page.getByLabel('API key').fill(apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Test MCP host wants to spend on your behalf' }).waitFor();
      const text = await page.locator('main').innerText();
      if (!/Unverified connector/.test(text)) throw new Error(`the page does not say unverified: ${text}`);
      await page.getByLabel(/^Cap/).fill('0.40');
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Approve' }).click()]);
      return new URL(page.url()).searchParams.get('code') ?? '';
    } finally {
      await closeBrowser(browser, [context]);
    }
  }

  type Body = (t: ExecutionContext) => Promise<void>;
  // Without Chromium the browser's test fails saying so: never a skip.
  const reg = (title: string, fn: Body): void =>
    byBrowser && !chromiumAvailable()
      ? test(`[${kind}] ${title}`, (t) => t.fail(CHROMIUM_MISSING))
      : register(`[${kind}] ${title}`, fn);

  reg(
    `the SDK client registers, gets the human's consent ${byBrowser ? 'in Chromium' : 'by the JSON authorize'}, calls every tool, refreshes, and is stopped by a revocation`,
    async (t) => {
      const st = stackOf();
      const u = await fundedUser(st, m.chain, 100_000_000n);
      const provider = new HostProvider(site?.url ?? '');
      const first = new Client({ name: 'host', version: '1.0.0' });
      await t.throwsAsync(
        first.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider })),
        {
          instanceOf: UnauthorizedError,
        },
      );
      // It registered itself, and was sent to the consent page for the MCP resource, asking for no scope.
      const clientId = provider.info?.client_id ?? '';
      const row = await st.ctx.db.em().fork().findOneOrFail(OAuthClient, { clientId });
      t.like(row, { registration: 'dynamic', verified: false, name: 'Test MCP host' });
      const authUrl = provider.authorizationUrl;
      if (authUrl === undefined) return t.fail('no authorization URL');
      t.is(authUrl.origin + authUrl.pathname, `${base}/oauth/authorize`);
      t.is(authUrl.searchParams.get('resource'), `${base}/mcp`);
      t.is(authUrl.searchParams.get('code_challenge_method'), 'S256');
      t.is(authUrl.searchParams.get('client_id'), clientId);

      const code = await humanApproves(authUrl, u.apiKey);
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      await transport.finishAuth(code);
      const tokens = provider.saved;
      if (tokens === undefined) return t.fail('no tokens');
      t.like(decodeJwt(tokens.access_token), { aud: `${base}/mcp`, scope: 'commerce', client_id: clientId });
      t.is(tokens.scope, 'commerce');

      const client = new Client({ name: 'host', version: '1.0.0' });
      await client.connect(transport);
      try {
        t.deepEqual(
          (await client.listTools()).tools.map((x) => x.name),
          ['search_services', 'call_service', 'get_spending', 'list_payments'],
        );
        const found = await client.callTool({ name: 'search_services', arguments: {} });
        t.falsy(found.isError);
        const paid = await client.callTool({ name: 'call_service', arguments: { url: m.v2.url + m.v2.paidPath } });
        t.falsy(paid.isError, JSON.stringify(paid));
        t.like(paid.structuredContent, { status: 200, paid: true });
        const spending = await client.callTool({ name: 'get_spending', arguments: {} });
        t.like(spending.structuredContent, { capCents: '40', spentCents: '2', remainingCents: '38' });
        const listed = await client.callTool({ name: 'list_payments', arguments: {} });
        t.is((listed.structuredContent as { payments: unknown[] }).payments.length, 1);

        // An expired access token: the client meets 401 invalid_token, refreshes with its refresh token, and goes on.
        const { expired } = await expiredAndForged(st, tokens.access_token);
        provider.saved = { ...tokens, access_token: expired };
        const after = await client.callTool({ name: 'get_spending', arguments: {} });
        t.like(after.structuredContent, { spentCents: '2' });
        t.not(provider.saved?.access_token, expired, 'refreshed');
        t.not(provider.saved?.refresh_token, tokens.refresh_token, 'the refresh token rotated');

        // The human revokes the binding: the next call is refused (the token and its refresh), and pays nothing.
        const grantId = String(decodeJwt(provider.saved?.access_token ?? '').grant_id);
        const revoked = await fetch(`${base}/oauth/bindings/${grantId}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${u.apiKey}` },
        });
        t.true(revoked.status < 300, String(revoked.status));
        // At once, in every process: the session is read with its grant on every request, so the next call is 401
        // invalid_token, and the client's refresh is refused too (the grant is gone): the host must ask its human.
        const next = await client
          .callTool({ name: 'call_service', arguments: { url: m.v2.url + m.v2.paidPath } })
          .catch((err: unknown) => err);
        t.true(next instanceof InvalidGrantError, String(next));
        const after401 = await client.callTool({ name: 'get_spending', arguments: {} }).catch((err: unknown) => err);
        t.true(after401 instanceof InvalidGrantError, String(after401));
        t.is(await st.ctx.db.em().fork().count(RouterPayment, { grantId }), 1);
      } finally {
        await client.close();
      }
    },
  );

  reg('the SDK client named by its Client ID Metadata Document: no registration, consent, a paid call', async (t) => {
    const st = stackOf();
    const u = await fundedUser(st, m.chain, 100_000_000n);
    const url = `${docs.origin}/hosts/${kind}/client.json`;
    docs.serve(url, {
      client_id: url,
      client_name: 'Hosted MCP host',
      redirect_uris: [site?.url ?? ''],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const provider = new HostProvider(site?.url ?? '', url);
    await t.throwsAsync(
      new Client({ name: 'host', version: '1.0.0' }).connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider }),
      ),
      { instanceOf: UnauthorizedError },
    );
    t.is(provider.info?.client_id, url, 'the document URL is the client_id');
    const authUrl = provider.authorizationUrl;
    if (authUrl === undefined) return t.fail('no authorization URL');
    t.is(authUrl.searchParams.get('client_id'), url);
    t.is(authUrl.searchParams.get('resource'), `${base}/mcp`);
    const approved = await approve(st, u.apiKey, {
      ...Object.fromEntries(authUrl.searchParams),
      spending_limit_cents: 10,
      currency: 'usd',
      duration_secs: 3600,
    });
    t.is(approved.status, 201, JSON.stringify(approved.body));
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await transport.finishAuth(String(approved.body.code));
    t.like(decodeJwt(provider.saved?.access_token ?? ''), { aud: `${base}/mcp`, client_id: url });
    const row = await st.ctx.db.em().fork().findOneOrFail(OAuthClient, { clientId: url });
    t.like(row, { registration: 'metadata_document', verified: false, name: 'Hosted MCP host' });
    t.true(docs.fetchCount(url) >= 1);

    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(transport);
    try {
      await client.listTools();
      const paid = await client.callTool({ name: 'call_service', arguments: { url: m.v1.url + m.v1.paidPath } });
      t.falsy(paid.isError, JSON.stringify(paid));
      t.like(paid.structuredContent, { status: 200, paid: true });
      const spending = await client.callTool({ name: 'get_spending', arguments: {} });
      t.like(spending.structuredContent, { capCents: '10', spentCents: '2', remainingCents: '8' });
    } finally {
      await client.close();
    }
  });
}
