// The consent and device pages in real headless Chromium (playwright-core with Debian's chromium): sign in,
// approve, deny, lower the cap and the duration, a forged CSRF token and a cross-site form refused, the page
// refusing to be framed, the session's sign-out and idle timeout, the cross-site arrival from a connector, and
// the device page: a wrong then a right code, a link whose code the sign-in page names and that leads to the
// request, a shorter duration granted and a longer one refused. The connector's side is openid-client: it builds the
// authorization URL and redeems the code the browser brings back.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Delegation, OAuthDeviceCode, OAuthGrant, OAuthPageSession } from '../../shared/db/entities/index.js';
import { type Connector, ISSUER, connector, pkce } from '../support/oauth.js';
import { within } from '../support/bounded.js';
import {
  CHROMIUM_MISSING,
  chromiumAvailable,
  closeBrowser,
  closePage,
  launchBrowser,
  newContext,
  newPage,
} from '../support/browser.js';
import { forEachDb } from '../support/matrix.js';
import type { Stack } from '../support/stack.js';

const available = chromiumAvailable();

/** A web server standing for the connector: its redirect URI, and pages of another site (`localhost`). */
interface Site {
  readonly origin: string;
  readonly callbacks: URL[];
  page(path: string, body: string): void;
  close(): Promise<void>;
}

async function site(): Promise<Site> {
  const callbacks: URL[] = [];
  const pages = new Map<string, string>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/callback') callbacks.push(url);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(pages.get(url.pathname) ?? '<!doctype html><title>connector</title><p>back at the connector</p>');
  });
  // Dual stack: Chromium may resolve `localhost` to ::1 or to 127.0.0.1.
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://localhost:${port}`,
    callbacks,
    page: (path, body) => pages.set(path, body),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Chromium keeps connections alive: close them, or close() waits for their timeout.
        server.closeAllConnections();
      }),
  };
}

interface Fixture {
  readonly s: Stack;
  readonly site: Site;
  readonly c: Connector;
  readonly redirectUri: string;
}

async function fixture(s: Stack, cb: Site): Promise<Fixture> {
  const port = new URL(cb.origin).port;
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const c = await connector(s, { redirectUris: [redirectUri], name: 'Acme Agents' });
  return { s, site: cb, c, redirectUri };
}

/** The consent page's URL as openid-client builds it, on the stack's front door. */
async function consentUrl(f: Fixture, challenge: string, extra: Record<string, string> = {}): Promise<string> {
  const url = client.buildAuthorizationUrl(f.c.config, {
    redirect_uri: f.redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'page-state',
    scope: 'commerce',
    spending_limit_cents: '5000',
    currency: 'usd',
    duration_secs: String(2 * 86_400),
    ...extra,
  });
  return url.href.replace(ISSUER, f.s.proxyUrl);
}

/** The device's tokens, once the human approved. */
function deviceTokens(f: Fixture, started: client.DeviceAuthorizationResponse) {
  return client.pollDeviceAuthorizationGrant(f.c.config, started, undefined, {
    // Polling goes on until the code expires (minutes) if the approval never registered: bounded.
    signal: AbortSignal.timeout(120_000),
  });
}

async function signIn(page: Page, apiKey: string): Promise<void> {
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

forEachDb(
  ({ kind, stack, test: register }) => {
    let browser: Browser | undefined;
    let cb: Site | undefined;
    test.before(async () => {
      if (!available) return;
      browser = await launchBrowser();
      cb = await site();
    });
    const contexts: BrowserContext[] = [];
    test.after.always(async () => {
      try {
        await closeBrowser(browser, contexts);
      } finally {
        await cb?.close();
      }
    });
    // Without Chromium each test fails saying so: never a skip.
    const reg = (
      available ? register : (title: string) => test(`[${kind}] ${title}`, (t) => t.fail(CHROMIUM_MISSING))
    ) as typeof register;
    /** A new browser context (a human with no cookies yet) and the connector's site. */
    const ready = async () => {
      if (browser === undefined || cb === undefined) throw new Error('browser not started');
      const context = await newContext(browser);
      contexts.push(context);
      return { context, cb };
    };
    /** A human with no cookies yet on a new page, and a device flow the connector started asking for `terms`. */
    const deviceFlow = async (terms: Record<string, string>) => {
      const { context, cb } = await ready();
      const f = await fixture(stack(), cb);
      const u = await f.s.user();
      const started = await client.initiateDeviceAuthorization(f.c.config, { scope: 'commerce', ...terms });
      return { f, u, started, page: await newPage(context) };
    };

    reg('consent: sign in, see the terms, lower cap and duration, approve; the code redeems', async (t) => {
      const { context, cb } = await ready();
      const f = await fixture(stack(), cb);
      const u = await f.s.user();
      const p = await pkce();
      const page = await newPage(context);
      const first = await page.goto(await consentUrl(f, p.challenge));
      t.is(first?.status(), 200);
      const headers = first?.headers() ?? {};
      t.regex(headers['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      t.regex(headers['content-security-policy'] ?? '', /default-src 'none'/);
      t.is(headers['x-frame-options'], 'DENY');
      t.is(headers['cache-control'], 'no-store');
      await signIn(page, u.apiKey);
      await page.getByRole('heading', { name: 'Acme Agents wants to spend on your behalf' }).waitFor();
      const text = await page.locator('main').innerText();
      t.regex(text, /Verified connector/);
      t.regex(text, /50\.00 USD/);
      t.regex(text, /2 days/);
      t.regex(text, new RegExp(`127\\.0\\.0\\.1:${new URL(cb.origin).port}`));
      t.regex(text, /Pay merchants from your wallet/);
      // The session cookie: HttpOnly, SameSite=Strict, and not readable by the page.
      const cookie = (await context.cookies(f.s.proxyUrl)).find((k) => k.name === 'payroute_page');
      t.like(cookie, { httpOnly: true, sameSite: 'Strict' });

      await page.getByLabel(/^Cap/).fill('12.34');
      await page.getByLabel('For').selectOption(String(86_400));
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Approve' }).click()]);
      const back = new URL(page.url());
      t.is(back.searchParams.get('state'), 'page-state');
      t.is(back.searchParams.get('iss'), ISSUER);
      const tokens = await client.authorizationCodeGrant(f.c.config, back, {
        pkceCodeVerifier: p.verifier,
        expectedState: 'page-state',
      });
      t.is(tokens.scope, 'commerce');
      const grant = await f.s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
      const d = await f.s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId });
      t.is(d.spendingLimitCents, 1234n);
      t.is(Math.round((d.expiresAt.getTime() - d.createdAt.getTime()) / 1000), 86_400);
      // Raising the cap is refused by the same rules as the JSON endpoint.
      await page.goto(await consentUrl(f, p.challenge));
      await page.getByLabel(/^Cap/).fill('50.01');
      const raised = await Promise.all([
        page.waitForResponse(/\/oauth\/consent$/),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      t.is(raised[0].status(), 400);
      await closePage(page);
    });

    reg(
      'consent: deny sends access_denied back; a bad client or redirect URI is an error page, never a redirect',
      async (t) => {
        const { context, cb } = await ready();
        const f = await fixture(stack(), cb);
        const u = await f.s.user();
        const p = await pkce();
        const page = await newPage(context);
        await page.goto(await consentUrl(f, p.challenge));
        await signIn(page, u.apiKey);
        await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Deny' }).click()]);
        t.is(new URL(page.url()).searchParams.get('error'), 'access_denied');
        t.is(await f.s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 0);

        const before = cb.callbacks.length;
        for (const bad of [{ client_id: 'no-such-client' }, { redirect_uri: 'http://127.0.0.1:1/elsewhere' }]) {
          const url = new URL(await consentUrl(f, p.challenge));
          for (const [k, v] of Object.entries(bad)) url.searchParams.set(k, v);
          const r = await page.goto(url.href);
          t.is(r?.status(), 400, JSON.stringify(bad));
          t.regex(await page.locator('main').innerText(), /Something is wrong with this request/);
        }
        // A request error after the client and redirect URI are good goes back to the connector.
        const r = await page.goto(await consentUrl(f, p.challenge, { code_challenge_method: 'plain' }));
        t.is(r?.url().startsWith(f.redirectUri), true);
        t.is(new URL(page.url()).searchParams.get('error'), 'invalid_request');
        t.is(cb.callbacks.length, before + 1);
        await closePage(page);
      },
    );

    reg('a forged CSRF token and a cross-site form are refused (403), nothing is granted', async (t) => {
      const { context, cb } = await ready();
      const f = await fixture(stack(), cb);
      const u = await f.s.user();
      const p = await pkce();
      const page = await newPage(context);
      await page.goto(await consentUrl(f, p.challenge));
      await signIn(page, u.apiKey);
      // What a forger would send: the form as the page shows it, but a token of its own.
      await page.evaluate(
        `document.querySelector('form[action="/oauth/consent"] input[name="csrf"]').value = 'forged-token'`,
      );
      const [forged] = await Promise.all([
        page.waitForResponse(/\/oauth\/consent$/),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      t.is(forged.status(), 403);
      t.regex(await page.locator('main').innerText(), /form expired or did not come from this page/);

      // Another site's form posting the same fields: SameSite=Strict keeps the cookie off, and it has no token.
      const query = Object.fromEntries(new URL(await consentUrl(f, p.challenge)).searchParams);
      const fields = Object.entries({ ...query, decision: 'approve', cap: '1.00', csrf: 'guess' })
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
        .join('');
      cb.page(
        '/attack',
        `<!doctype html><form id="f" method="post" action="${f.s.proxyUrl}/oauth/consent">${fields}<button>go</button></form>`,
      );
      await page.goto(`${cb.origin}/attack`);
      const [attack] = await Promise.all([
        page.waitForResponse(/\/oauth\/consent$/),
        page.getByRole('button', { name: 'go' }).click(),
      ]);
      t.is(attack.status(), 403);
      t.is(await f.s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 0);
      await closePage(page);
    });

    reg('the consent page refuses to be framed by another site', async (t) => {
      const { context, cb } = await ready();
      const f = await fixture(stack(), cb);
      const target = await consentUrl(f, (await pkce()).challenge);
      cb.page('/frame', `<!doctype html><title>framer</title><iframe id="x" src="${target}"></iframe>`);
      const page = await newPage(context);
      const asked = (url: string) => url.startsWith(`${f.s.proxyUrl}/oauth/authorize`);
      const blocked = new Promise<boolean>((resolve) => {
        page.on('response', (r) => {
          if (asked(r.url())) resolve(true);
        });
        page.on('requestfailed', (r) => {
          if (asked(r.url())) resolve(true);
        });
      });
      await page.goto(`${cb.origin}/frame`);
      t.true(await within('the framed page being asked for', blocked), 'the browser asked for the page');
      const frame = page.frames().find((fr) => fr !== page.mainFrame());
      // Blocked by frame-ancestors: the frame holds Chromium's error document, not the page.
      const content = frame === undefined ? '' : await frame.content().catch(() => '');
      t.false(content.includes('payroute'), content.slice(0, 200));
      await closePage(page);
    });

    reg('sign-out and the idle timeout end the session; a connector link from another site keeps it', async (t) => {
      const { context, cb } = await ready();
      const f = await fixture(stack(), cb);
      const u = await f.s.user();
      const url = await consentUrl(f, (await pkce()).challenge);
      const page = await newPage(context);
      await page.goto(url);
      await signIn(page, u.apiKey);
      await page.getByRole('button', { name: 'Approve' }).waitFor();

      // Arriving from the connector's site (a cross-site navigation) still finds the session.
      cb.page('/link', `<!doctype html><a id="go" href="${url}">connect</a>`);
      await page.goto(`${cb.origin}/link`);
      await page.click('#go');
      await page.getByRole('button', { name: 'Approve' }).waitFor();

      // Idle past OAUTH_PAGE_SESSION_IDLE_SECS: signed out.
      await f.s.ctx.db
        .em()
        .nativeUpdate(OAuthPageSession, { userId: u.userId }, { lastSeenAt: new Date(Date.now() - 3_600_000) });
      await page.goto(url);
      await page.getByLabel('API key').waitFor();
      await signIn(page, u.apiKey);
      // The idle session stays until the purge; the new one is deleted at sign-out.
      const sessions = await f.s.ctx.db.em().count(OAuthPageSession, { userId: u.userId });
      await Promise.all([
        page.waitForURL(/\/oauth\/authorize\?/),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      await page.getByLabel('API key').waitFor();
      t.is(await f.s.ctx.db.em().count(OAuthPageSession, { userId: u.userId }), sessions - 1);
      // A wrong key is told so, with 401.
      await page.getByLabel('API key').fill('sandbox:not-a-key');
      const [wrong] = await Promise.all([
        page.waitForResponse(/\/oauth\/sign-in$/),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      t.is(wrong.status(), 401);
      t.regex(await page.locator('main').innerText(), /not valid/);
      await closePage(page);
    });

    reg(
      'device page: a wrong code, then the right one, approved with a lower cap; the device gets its tokens',
      async (t) => {
        const { f, u, started, page } = await deviceFlow({ spending_limit_cents: '3000' });
        await page.goto(`${f.s.proxyUrl}/device`);
        await signIn(page, u.apiKey);
        await page.getByLabel('Code').fill('BCDF-GHJK');
        const [wrong] = await Promise.all([
          page.waitForResponse(/\/device$/),
          page.getByRole('button', { name: 'Continue' }).click(),
        ]);
        t.is(wrong.status(), 400);
        t.regex(await page.locator('main').innerText(), /Invalid or expired user code|user code/i);
        await page.getByLabel('Code').fill(started.user_code.toLowerCase());
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('heading', { name: 'Acme Agents wants to spend on your behalf' }).waitFor();
        t.regex(await page.locator('main').innerText(), /30\.00 USD/);
        await page.getByLabel(/^Cap/).fill('20');
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.getByRole('heading', { name: 'Device connected' }).waitFor();
        const tokens = await deviceTokens(f, started);
        t.is(tokens.scope, 'commerce');
        const grant = await f.s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
        t.is((await f.s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId })).spendingLimitCents, 2000n);
        // verification_uri_complete of the code now used: the entry form, the code filled in, saying why.
        await page.goto(started.verification_uri_complete?.replace(ISSUER, f.s.proxyUrl) ?? '');
        t.is(await page.getByLabel('Code').inputValue(), started.user_code);
        await closePage(page);
      },
    );

    reg(
      'device page: a link names its code at sign-in and fills it in; the request offers the durations; a shorter one is what is granted',
      async (t) => {
        const { f, u, started, page } = await deviceFlow({
          spending_limit_cents: '3000',
          duration_secs: String(2 * 86_400),
        });
        const code = started.user_code;
        // The link as a human might type it (lower case, no dash): the page names the code as the device shows it.
        const first = await page.goto(`${f.s.proxyUrl}/device?user_code=${code.replace('-', '').toLowerCase()}`);
        t.is(first?.status(), 200);
        t.regex(first?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
        t.regex(await page.locator('main').innerText(), new RegExp(`You are connecting the device that shows ${code}`));
        await signIn(page, u.apiKey);
        // Signed in: the code is filled in; Continue (the form's POST) looks it up.
        t.is(await page.getByLabel('Code').inputValue(), code);
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('heading', { name: 'Acme Agents wants to spend on your behalf' }).waitFor();
        const text = await page.locator('main').innerText();
        t.regex(text, new RegExp(`Code\\s+${code}`));
        t.regex(text, /30\.00 USD/);
        t.regex(text, /2 days/);
        t.regex(text, /Pay merchants from your wallet/);
        t.is(await page.getByLabel('For').inputValue(), String(2 * 86_400));
        t.deepEqual(await page.locator('select[name="duration"] option').allTextContents(), [
          '2 days',
          '1 day',
          '1 hour',
        ]);
        t.is(await page.locator('form[action="/device/decision"] input[name="csrf"]').count(), 1);

        await page.getByLabel('For').selectOption(String(3600));
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.getByRole('heading', { name: 'Device connected' }).waitFor();
        const grant = await f.s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
        const d = await f.s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId });
        t.is(Math.round((d.expiresAt.getTime() - d.createdAt.getTime()) / 1000), 3600);
        t.is(d.spendingLimitCents, 3000n);
        // The device's token carries that delegation.
        const tokens = await deviceTokens(f, started);
        const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1] ?? '', 'base64url').toString()) as {
          delegation_id?: string;
        };
        t.is(claims.delegation_id, grant.delegationId);
        await closePage(page);
      },
    );

    reg(
      'device page: a link with an unknown code is refused at Continue with its error; a longer duration is 400',
      async (t) => {
        const { f, u, started, page } = await deviceFlow({ duration_secs: '3600' });
        await page.goto(`${f.s.proxyUrl}/device?user_code=BCDF-GHJK`);
        t.regex(await page.locator('main').innerText(), /You are connecting the device that shows BCDF-GHJK/);
        await signIn(page, u.apiKey);
        t.is(await page.getByLabel('Code').inputValue(), 'BCDF-GHJK');
        const [refusedCode] = await Promise.all([
          page.waitForResponse(/\/device$/),
          page.getByRole('button', { name: 'Continue' }).click(),
        ]);
        t.is(refusedCode.status(), 400);
        t.regex(await page.locator('main').innerText(), /Invalid or expired user code/);

        // The right code asks for an hour: that is all the page offers, and a longer one sent by hand is refused.
        await page.getByLabel('Code').fill(started.user_code);
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('heading', { name: 'Acme Agents wants to spend on your behalf' }).waitFor();
        t.deepEqual(await page.locator('select[name="duration"] option').allTextContents(), ['1 hour']);
        for (const forged of ['7200', 'soon']) {
          await page.goto(`${f.s.proxyUrl}/device?user_code=${started.user_code}`);
          await page.getByRole('button', { name: 'Continue' }).click();
          await page.getByRole('heading', { name: 'Acme Agents wants to spend on your behalf' }).waitFor();
          await page.evaluate(`document.querySelector('select[name="duration"] option').value = '${forged}'`);
          const [refused] = await Promise.all([
            page.waitForResponse(/\/device\/decision$/),
            page.getByRole('button', { name: 'Approve' }).click(),
          ]);
          t.is(refused.status(), 400, forged);
          t.regex(await page.locator('main').innerText(), /BCK\.HTTP\.0400/, forged);
        }
        t.is(await f.s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 0);
        const row = await f.s.ctx.db.em().findOneOrFail(OAuthDeviceCode, { clientId: f.c.registration.clientId });
        t.like(row, { status: 'pending', userId: null });
        await closePage(page);
      },
    );
  },
  { OAUTH_DEVICE_POLL_INTERVAL_SECS: '1' },
  { serial: true },
);
