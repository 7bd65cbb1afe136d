// Every form of the consent and device pages (sign-in, sign-out, consent, device lookup, device decision) is refused
// 403 BCK.OAUTH.0022, as a page, unless it carries the CSRF token bound to the browser's cookie: without a csrf field,
// with an empty one, a forged one, or another browser's; and nothing changes in the database. The forms are
// otherwise right (a signed-in session, every other field valid: the same forms with the right token succeed at the
// end), so only the CSRF check stands between them and their effect. (The defect: a form without a csrf field was
// a 400 from the form's schema, parsed before the check; the README documents 403 BCK.OAUTH.0022.) Plain HTTP with
// a cookie, as a browser sends a form; the pages in Chromium are test/pages/oauth-pages.test.ts.
import {
  Delegation,
  OAuthCode,
  OAuthDeviceCode,
  OAuthGrant,
  OAuthPageSession,
  OAuthUserCodeAttempts,
} from '../../shared/db/entities/index.js';
import { forEachDb } from '../support/matrix.js';
import { REDIRECT_URI, connector, pkce, postForm } from '../support/oauth.js';
import type { Stack } from '../support/stack.js';

interface PageAnswer {
  readonly status: number;
  readonly type: string;
  readonly text: string;
  /** The browser token the answer sets, if any. */
  readonly cookie: string | undefined;
  readonly location: string | null;
}

/** A browser's request to the front door: its cookie, and a form if it posts one. */
async function browse(s: Stack, path: string, cookie?: string, form?: Record<string, string>): Promise<PageAnswer> {
  const headers: Record<string, string> = cookie === undefined ? {} : { cookie: `payroute_page=${cookie}` };
  const r = await fetch(`${s.proxyUrl}${path}`, {
    method: form === undefined ? 'GET' : 'POST',
    redirect: 'manual',
    headers: form === undefined ? headers : { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
  });
  return {
    status: r.status,
    type: r.headers.get('content-type') ?? '',
    text: await r.text(),
    cookie: /payroute_page=([A-Za-z0-9_-]+)/.exec(r.headers.get('set-cookie') ?? '')?.[1],
    location: r.headers.get('location'),
  };
}

/** The CSRF token a page's forms carry. */
function csrfOn(page: PageAnswer): string {
  const token = /name="csrf" value="([A-Za-z0-9_-]+)"/.exec(page.text)?.[1];
  if (token === undefined) throw new Error(`no csrf field on the page: ${page.status} ${page.text.slice(0, 300)}`);
  return token;
}

/** Every row the forms could write, as it stands. */
async function rows(s: Stack): Promise<string> {
  const em = s.ctx.db.em();
  const all = await Promise.all([
    em.find(OAuthPageSession, {}),
    em.find(OAuthGrant, {}),
    em.find(Delegation, {}),
    em.find(OAuthCode, {}),
    em.find(OAuthDeviceCode, {}),
    em.find(OAuthUserCodeAttempts, {}),
  ]);
  return JSON.stringify(all, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

forEachDb(({ stack, test }) => {
  test('every page form without the browser-bound CSRF token is 403 BCK.OAUTH.0022 as a page, and changes nothing', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s, { redirectUris: [REDIRECT_URI] });
    const p = await pkce();

    // Browser A signs in; browser B is another browser, with a token of its own.
    const a0 = await browse(s, '/device');
    t.is(a0.status, 200);
    const signedIn = await browse(s, '/oauth/sign-in', a0.cookie, {
      csrf: csrfOn(a0),
      return_to: '/device',
      api_key: u.apiKey,
    });
    t.is(signedIn.status, 303, signedIn.text);
    const a = signedIn.cookie;
    t.truthy(a);
    const aCsrf = csrfOn(await browse(s, '/device', a));
    const b = await browse(s, '/device');
    const bCsrf = csrfOn(b);
    t.not(bCsrf, aCsrf);

    const started = await postForm(s, '/oauth/device_authorization', {
      client_id: c.registration.clientId,
      scope: 'commerce',
    });
    t.is(started.status, 200);
    const userCode = String(started.body.user_code);
    const consent = {
      client_id: c.registration.clientId,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      scope: 'commerce',
      spending_limit_cents: '5000',
      currency: 'usd',
      duration_secs: '3600',
      decision: 'approve',
    };
    /** Each form with every field right but the token. */
    const forms: [string, Record<string, string>][] = [
      ['/oauth/sign-in', { return_to: '/device', api_key: u.apiKey }],
      ['/oauth/sign-out', { return_to: '/device' }],
      ['/oauth/consent', consent],
      ['/device', { user_code: userCode }],
      ['/device/decision', { user_code: userCode, decision: 'approve', cap: '10.00' }],
    ];
    const tokens: [string, string | undefined, string | undefined][] = [
      ['no csrf field', a, undefined],
      ['an empty csrf field', a, ''],
      ['a forged token', a, 'x'.repeat(43)],
      ['a token of the right form, made up', a, aCsrf.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A'))],
      ["another browser's token", a, bCsrf],
      ['the right token without its cookie', undefined, aCsrf],
      ["the right token with another browser's cookie", b.cookie, aCsrf],
    ];

    const before = await rows(s);
    const wrong: string[] = [];
    for (const [path, fields] of forms) {
      for (const [what, cookie, csrf] of tokens) {
        const r = await browse(s, path, cookie, csrf === undefined ? fields : { ...fields, csrf });
        if (r.status !== 403 || !r.type.startsWith('text/html') || !r.text.includes('BCK.OAUTH.0022'))
          wrong.push(`${path} with ${what}: ${r.status} ${r.type} ${r.text.slice(0, 200)}`);
      }
    }
    t.deepEqual(wrong, []);
    t.is(await rows(s), before, 'nothing changed in the database');

    // The same forms with the right token do what they do: only the token was missing.
    const lookup = await browse(s, '/device', a, { user_code: userCode, csrf: aCsrf });
    t.is(lookup.status, 200, lookup.text.slice(0, 300));
    const decided = await browse(s, '/device/decision', a, {
      user_code: userCode,
      decision: 'approve',
      cap: '10.00',
      csrf: aCsrf,
    });
    t.is(decided.status, 200, decided.text.slice(0, 300));
    const consented = await browse(s, '/oauth/consent', a, { ...consent, csrf: aCsrf });
    t.is(consented.status, 303, consented.text.slice(0, 300));
    t.true(consented.location?.startsWith(`${REDIRECT_URI}?code=`), String(consented.location));
    const out = await browse(s, '/oauth/sign-out', a, { return_to: '/device', csrf: aCsrf });
    t.is(out.status, 303);
    t.is(await s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 2);
  });
});
