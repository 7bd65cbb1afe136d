// The device flow (RFC 8628), driven by openid-client as a connector without a browser would: device
// authorization, the human's look-up and decision with their API key, polling. Then the refusals (pending,
// slow_down enforced, denied, expired, replay), the duration the human may shorten, the per-user limit on wrong
// user codes (RFC 8628 §5.1) and the races: one decision per code, one redemption per approval. The poll interval
// is 1 s here (OAUTH_DEVICE_POLL_INTERVAL_SECS) so the suite does not wait 5 s per poll.
import * as client from 'openid-client';
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { Delegation, OAuthDeviceCode, OAuthGrant } from '../../shared/db/entities/index.js';
import { MAX_WRONG_GUESSES } from '../../shared/oauth/guess-limit.js';
import { USER_CODE_ALPHABET, normalizeUserCode } from '../../shared/oauth/user-code.js';
import { forEachDb } from '../support/matrix.js';
import type { Stack } from '../support/stack.js';
import { ISSUER, connector, postForm } from '../support/oauth.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function human(s: Stack, apiKey: string, path: string, body: unknown) {
  const r = await fetch(`${s.proxyUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  return {
    status: r.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: r.headers,
  };
}

async function start(s: Stack, clientId: string, extra: Record<string, string> = {}) {
  const r = await postForm(s, '/oauth/device_authorization', { client_id: clientId, scope: 'commerce', ...extra });
  return r.body as { device_code: string; user_code: string; interval: number };
}

const poll = (s: Stack, clientId: string, deviceCode: string) =>
  postForm(s, '/oauth/token', { grant_type: DEVICE_GRANT, client_id: clientId, device_code: deviceCode });

forEachDb(
  ({ stack, test }) => {
    test('openid-client: device authorization, look-up, approval with a lowered cap, polling to tokens', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const started = await client.initiateDeviceAuthorization(c.config, {
        scope: 'commerce',
        spending_limit_cents: '2500',
        currency: 'usdc',
        duration_secs: '7200',
      });
      t.regex(started.user_code, new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`));
      t.is(started.verification_uri, 'http://payroute.test/device');
      t.is(started.verification_uri_complete, `http://payroute.test/device?user_code=${started.user_code}`);
      t.is(started.expires_in, 600);
      t.is(started.interval, 1);
      // Stored hashed: neither code is in the row.
      const row = await s.ctx.db
        .em()
        .findOneOrFail(OAuthDeviceCode, { deviceCodeHash: sha256Hex(started.device_code) });
      t.is(row.userCodeHash, sha256Hex(normalizeUserCode(started.user_code) ?? ''));

      // The human types it in lower case without the dash.
      const typed = started.user_code.replace('-', '').toLowerCase();
      const details = await human(s, u.apiKey, '/oauth/device/details', { user_code: typed });
      t.is(details.status, 200);
      t.deepEqual(details.body, {
        connectorName: 'Test Connector',
        verified: true,
        consentType: 'commerce',
        spendingLimitCents: '2500',
        currency: 'usdc',
        durationSecs: 7200,
      });
      const polling = client.pollDeviceAuthorizationGrant(c.config, started);
      await sleep(1500); // the connector is now polling and told authorization_pending
      const decided = await human(s, u.apiKey, '/oauth/device', {
        user_code: typed,
        approve: true,
        spending_limit_cents: 1500,
      });
      t.is(decided.status, 204);
      const tokens = await polling;
      t.is(tokens.scope, 'commerce');
      t.truthy(tokens.refresh_token);
      const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
      const d = await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId });
      t.like(d, { spendingLimitCents: 1500n, currency: 'usdc', provider: 'erc4337' });
      // The refresh token works as for the code flow.
      const refreshed = await client.refreshTokenGrant(c.config, String(tokens.refresh_token));
      t.truthy(refreshed.access_token);
    });

    test('polling answers authorization_pending, slow_down (enforced, +5 s), access_denied, expired_token', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const id = c.registration.clientId;
      const a = await start(s, id);
      const pending = await poll(s, id, a.device_code);
      t.is(pending.status, 400);
      t.is(pending.body.error, 'authorization_pending');
      const hash = sha256Hex(a.device_code);
      // The interval is made long here (1 s in this suite), so that a loaded machine cannot make the next poll late:
      // a poll within it is slow_down, and each slow_down adds 5 s.
      await s.ctx.db.em().nativeUpdate(OAuthDeviceCode, { deviceCodeHash: hash }, { intervalSecs: 60 });
      const fast = await poll(s, id, a.device_code);
      t.is(fast.body.error, 'slow_down');
      t.is((await s.ctx.db.em().findOneOrFail(OAuthDeviceCode, { deviceCodeHash: hash })).intervalSecs, 65);
      // Still within the interval after a while: slow_down again, and the interval grows again.
      await sleep(1200);
      t.is((await poll(s, id, a.device_code)).body.error, 'slow_down');
      t.is((await s.ctx.db.em().findOneOrFail(OAuthDeviceCode, { deviceCodeHash: hash })).intervalSecs, 70);

      const b = await start(s, id);
      t.is((await human(s, u.apiKey, '/oauth/device', { user_code: b.user_code, approve: false })).status, 204);
      const denied = await poll(s, id, b.device_code);
      t.is(denied.body.error, 'access_denied');

      const e = await start(s, id);
      await s.ctx.db
        .em()
        .nativeUpdate(
          OAuthDeviceCode,
          { deviceCodeHash: sha256Hex(e.device_code) },
          { expiresAt: new Date(Date.now() - 1000) },
        );
      const expired = await poll(s, id, e.device_code);
      t.is(expired.body.error, 'expired_token');
      // An expired user code cannot be approved either.
      const late = await human(s, u.apiKey, '/oauth/device', { user_code: e.user_code, approve: true });
      t.is(late.status, 400);
      t.is(late.body.code, 'BCK.OAUTH.0020');
      // A device code of another client, or none at all.
      const other = await connector(s);
      t.is((await poll(s, other.registration.clientId, b.device_code)).body.error, 'invalid_grant');
      t.is((await poll(s, id, 'no-such-code')).body.error, 'invalid_grant');
    });

    test('a redeemed device code polled again is invalid_grant and revokes the grant', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const id = c.registration.clientId;
      const a = await start(s, id);
      t.is((await human(s, u.apiKey, '/oauth/device', { user_code: a.user_code, approve: true })).status, 204);
      const tokens = await poll(s, id, a.device_code);
      t.is(tokens.status, 200);
      t.is(tokens.headers.get('cache-control'), 'no-store');
      await sleep(1100);
      const replay = await poll(s, id, a.device_code);
      t.is(replay.body.error, 'invalid_grant');
      const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
      t.like(grant, { status: 'Revoked', revokedReason: 'device_replay' });
      t.is((await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId })).status, 'Revoked');
    });

    test('the human side: unknown or used codes 0020, a raised cap refused, no key 0007', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const a = await start(s, c.registration.clientId, { spending_limit_cents: '1000' });
      const raised = await human(s, u.apiKey, '/oauth/device', {
        user_code: a.user_code,
        approve: true,
        spending_limit_cents: 1001,
      });
      t.is(raised.status, 400);
      t.is(raised.body.code, 'BCK.HTTP.0400');
      t.is((await human(s, u.apiKey, '/oauth/device', { user_code: a.user_code, approve: true })).status, 204);
      for (const path of ['/oauth/device/details', '/oauth/device']) {
        const used = await human(s, u.apiKey, path, { user_code: a.user_code, approve: true });
        t.is(used.status, 400, path);
        t.is(used.body.code, 'BCK.OAUTH.0020', path);
      }
      for (const code of ['BCDF-GHJK', 'AAAA-AAAA', '', 'x'.repeat(64)]) {
        const r = await human(s, u.apiKey, '/oauth/device/details', { user_code: code });
        t.is(r.status, 400, code);
        t.is(r.body.code, 'BCK.OAUTH.0020', code);
      }
      const noKey = await fetch(`${s.proxyUrl}/oauth/device/details`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_code: a.user_code }),
      });
      t.is(noKey.status, 401);
      t.is(((await noKey.json()) as { code: string }).code, 'BCK.OAUTH.0007');
    });

    test('the human may shorten the duration (duration_secs); a longer or malformed one is 400, nothing approved', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const a = await start(s, c.registration.clientId, { duration_secs: '7200' });
      const row = () => s.ctx.db.em().findOneOrFail(OAuthDeviceCode, { deviceCodeHash: sha256Hex(a.device_code) });
      for (const bad of [7201, 86_400, 30, 0, -60, 1.5, 'soon', '', null, true]) {
        const r = await human(s, u.apiKey, '/oauth/device', {
          user_code: a.user_code,
          approve: true,
          duration_secs: bad,
        });
        t.is(r.status, 400, JSON.stringify(bad));
        t.is(r.body.code, 'BCK.HTTP.0400', JSON.stringify(bad));
      }
      t.is((await row()).status, 'pending');
      t.is(await s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 0);
      // A form's string as well as a JSON number; the cap is left as asked.
      const decided = await human(s, u.apiKey, '/oauth/device', {
        user_code: a.user_code,
        approve: true,
        duration_secs: '3600',
      });
      t.is(decided.status, 204);
      t.is((await row()).status, 'approved');
      const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
      const d = await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId });
      t.is(Math.round((d.expiresAt.getTime() - d.createdAt.getTime()) / 1000), 3600);
      t.is(d.spendingLimitCents, 1000n);
      // The duration asked for, named as such, is allowed too.
      const b = await start(s, c.registration.clientId, { duration_secs: '7200' });
      const whole = await human(s, u.apiKey, '/oauth/device', {
        user_code: b.user_code,
        approve: true,
        duration_secs: 7200,
      });
      t.is(whole.status, 204);
    });

    test('wrong user codes are limited per user: parallel guesses past the limit get 429 with Retry-After', async (t) => {
      const s = stack();
      const u = await s.user();
      const other = await s.user();
      const c = await connector(s);
      const results = await Promise.all(
        Array.from({ length: MAX_WRONG_GUESSES + 6 }, () =>
          human(s, u.apiKey, '/oauth/device/details', { user_code: 'BCDF-GHJK' }),
        ),
      );
      t.is(results.filter((r) => r.status === 400).length, MAX_WRONG_GUESSES);
      const limited = results.filter((r) => r.status === 429);
      t.is(limited.length, 6);
      for (const r of limited) {
        t.is(r.body.code, 'BCK.OAUTH.0021');
        const retry = Number(r.headers.get('retry-after'));
        t.true(retry >= 1 && retry <= 600);
      }
      // Even the right code waits for the window: the limit is per user, not per code.
      const a = await start(s, c.registration.clientId);
      t.is((await human(s, u.apiKey, '/oauth/device/details', { user_code: a.user_code })).status, 429);
      // Another user is not limited by this one's guesses.
      t.is((await human(s, other.apiKey, '/oauth/device/details', { user_code: a.user_code })).status, 200);
    });

    test('race: parallel decisions on one code have one winner; parallel polls of an approval issue tokens once', async (t) => {
      const s = stack();
      const u = await s.user();
      const c = await connector(s);
      const id = c.registration.clientId;
      const a = await start(s, id);
      const decisions = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          human(s, u.apiKey, '/oauth/device', { user_code: a.user_code, approve: i % 2 === 0 }),
        ),
      );
      t.is(decisions.filter((r) => r.status === 204).length, 1);
      t.true(decisions.filter((r) => r.status !== 204).every((r) => r.body.code === 'BCK.OAUTH.0020'));
      const row = await s.ctx.db.em().findOneOrFail(OAuthDeviceCode, { deviceCodeHash: sha256Hex(a.device_code) });
      t.is(await s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), row.status === 'approved' ? 1 : 0);
      t.is(await s.ctx.db.em().count(Delegation, { userId: u.userId }), row.status === 'approved' ? 1 : 0);

      const b = await start(s, id);
      t.is((await human(s, u.apiKey, '/oauth/device', { user_code: b.user_code, approve: true })).status, 204);
      const polls = await Promise.all(Array.from({ length: 6 }, () => poll(s, id, b.device_code)));
      t.is(polls.filter((r) => r.status === 200).length, 1);
      t.true(polls.filter((r) => r.status !== 200).every((r) => r.body.error === 'slow_down'));
    });

    test('device authorization refusals: unknown client 401 invalid_client, a scope the client may not ask for', async (t) => {
      const s = stack();
      const c = await connector(s, { allowedConsentTypes: ['commerce'] });
      const cases: [Record<string, string>, number, string][] = [
        [{ client_id: 'nope', scope: 'commerce' }, 401, 'invalid_client'],
        [{ client_id: c.registration.clientId, scope: 'account_access' }, 400, 'invalid_scope'],
        [{ client_id: c.registration.clientId, scope: 'openid' }, 400, 'invalid_scope'],
        [{ client_id: c.registration.clientId, scope: 'commerce', resource: `${ISSUER}/api` }, 400, 'invalid_target'],
        [{ client_id: c.registration.clientId, scope: 'commerce', spending_limit_cents: '0' }, 400, 'invalid_request'],
        [{ client_id: c.registration.clientId, scope: 'commerce', currency: 'btc' }, 400, 'invalid_request'],
      ];
      for (const [form, status, error] of cases) {
        const r = await postForm(s, '/oauth/device_authorization', form);
        t.is(r.status, status, JSON.stringify(form));
        t.is(r.body.error, error, JSON.stringify(form));
      }
    });
  },
  { OAUTH_DEVICE_POLL_INTERVAL_SECS: '1' },
);
