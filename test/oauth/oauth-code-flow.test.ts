// The authorization code flow with PKCE, driven by openid-client as a connector would drive it: the human approves
// with POST /oauth/authorize (their API key, as the consent page does), the connector exchanges the code, refreshes,
// and revokes. Then every refusal the flow has, and the races: parallel redemptions of one code and parallel
// refreshes of one token each have exactly one winner. SQLite and PostgreSQL, real processes.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { Delegation, OAuthCode, OAuthGrant, OAuthRefreshToken } from '../../shared/db/entities/index.js';
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { disableClient } from '../../shared/oauth/clients.js';
import { forEachDb } from '../support/matrix.js';
import {
  ISSUER,
  REDIRECT_URI,
  approve,
  authorizeBody,
  codeForm,
  connector,
  consented,
  pkce,
  postForm,
  refreshForm,
} from '../support/oauth.js';

forEachDb(({ stack, test }) => {
  test('code + PKCE: approve, exchange, verify the access token, refresh (rotation), revoke', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    const p = await pkce();

    const approved = await approve(s, u.apiKey, authorizeBody(c, p));
    t.is(approved.status, 201);
    const code = String(approved.body.code);
    t.regex(code, /^[A-Za-z0-9_-]{43}$/); // 256 bits
    const redirect = new URL(String(approved.body.redirectTo));
    t.is(`${redirect.origin}${redirect.pathname}`, REDIRECT_URI);
    t.deepEqual(
      [...redirect.searchParams.entries()],
      [
        ['code', code],
        ['state', 'st-123'],
        ['iss', ISSUER],
      ],
    );
    // Stored hashed, bound to client, redirect URI and challenge; the grant and its delegation exist already.
    const row = await s.ctx.db.em().findOneOrFail(OAuthCode, { codeHash: sha256Hex(code) });
    t.like(row, {
      clientId: c.registration.clientId,
      redirectUri: REDIRECT_URI,
      codeChallenge: p.challenge,
      consumedAt: null,
    });
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: row.grantId });
    t.like(grant, { userId: u.userId, clientId: c.registration.clientId, consentType: 'commerce', status: 'Active' });
    const delegation = await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId });
    t.like(delegation, {
      userId: u.userId,
      provider: 'erc4337',
      currency: 'usd',
      spendingLimitCents: 5000n,
      status: 'Active',
    });

    const tokens = await client.authorizationCodeGrant(c.config, redirect, {
      pkceCodeVerifier: p.verifier,
      expectedState: 'st-123',
    });
    t.is(tokens.token_type.toLowerCase(), 'bearer');
    t.is(tokens.expires_in, 900);
    t.is(tokens.scope, 'commerce');
    t.truthy(tokens.refresh_token);

    // The access token: ES256 at+jwt (RFC 9068) that verifies against the published JWKS.
    const jwks = createRemoteJWKSet(new URL(`${s.proxyUrl}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: ISSUER,
      audience: `${ISSUER}/api/v1`,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    });
    t.is(protectedHeader.alg, 'ES256');
    t.like(payload, {
      sub: u.userId,
      client_id: c.registration.clientId,
      scope: 'commerce',
      grant_id: grant.id,
      delegation_id: grant.delegationId,
    });
    t.truthy(payload.jti);
    t.is(Number(payload.exp) - Number(payload.iat), 900);

    // Refresh rotates: a new refresh token each time, the old one marked rotated.
    const refreshed = await client.refreshTokenGrant(c.config, String(tokens.refresh_token));
    t.not(refreshed.refresh_token, tokens.refresh_token);
    const old = await s.ctx.db
      .em()
      .findOneOrFail(OAuthRefreshToken, { tokenHash: sha256Hex(String(tokens.refresh_token)) });
    t.truthy(old.rotatedAt);

    // Revocation (RFC 7009) of the refresh token ends the grant and its delegation.
    await client.tokenRevocation(c.config, String(refreshed.refresh_token));
    const revoked = await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: grant.id });
    t.like(revoked, { status: 'Revoked', revokedReason: 'revocation_endpoint' });
    t.is((await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId })).status, 'Revoked');
    const after = await postForm(s, '/oauth/token', refreshForm(c, String(refreshed.refresh_token)));
    t.is(after.status, 400);
    t.is(after.body.error, 'invalid_grant');
  });

  test('token responses are no-store; errors are RFC 6749 JSON, invalid_client is 401', async (t) => {
    const s = stack();
    const { c, p, code } = await consented(s);
    const ok = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
    t.is(ok.status, 200);
    t.is(ok.headers.get('cache-control'), 'no-store');
    t.deepEqual(Object.keys(ok.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    t.is(ok.body.token_type, 'Bearer');

    const cases: [Record<string, string>, number, string][] = [
      [{}, 400, 'invalid_request'],
      [{ grant_type: 'password', username: 'a', password: 'b' }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'client_credentials' }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'authorization_code', client_id: c.registration.clientId }, 400, 'invalid_request'],
      [{ grant_type: 'refresh_token', client_id: 'no-such-client', refresh_token: 'x' }, 401, 'invalid_client'],
      [refreshForm(c, 'not-a-token'), 400, 'invalid_grant'],
    ];
    for (const [form, status, error] of cases) {
      const r = await postForm(s, '/oauth/token', form);
      t.is(r.status, status, JSON.stringify(form));
      t.is(r.body.error, error, JSON.stringify(form));
      t.is(typeof r.body.error_description, 'string');
      t.is(r.headers.get('cache-control'), 'no-store');
    }
    // JSON bodies are accepted as well as forms.
    const json = await fetch(`${s.proxyUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(refreshForm(c, String(ok.body.refresh_token))),
    });
    t.is(json.status, 200);
    // Neither form nor JSON: invalid_request, still in RFC 6749's format.
    const text = await fetch(`${s.proxyUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    t.is(text.status, 400);
    t.is(((await text.json()) as { error: string }).error, 'invalid_request');
  });

  test('PKCE refusals: no challenge or plain at authorize; a wrong verifier at the token endpoint', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    const p = await pkce();
    for (const extra of [
      { code_challenge: undefined },
      { code_challenge_method: 'plain' },
      { code_challenge_method: undefined },
      { code_challenge: 'short' },
    ]) {
      const r = await approve(s, u.apiKey, authorizeBody(c, p, extra));
      t.is(r.status, 400, JSON.stringify(extra));
      t.is(r.body.code, 'BCK.OAUTH.0018', JSON.stringify(extra));
    }
    const code = String((await approve(s, u.apiKey, authorizeBody(c, p))).body.code);
    const other = await pkce();
    const wrong = await postForm(s, '/oauth/token', codeForm(c, code, other.verifier));
    t.is(wrong.status, 400);
    t.is(wrong.body.error, 'invalid_grant');
    // A wrong redirect URI at the exchange, and a code presented by another client.
    const c2 = await connector(s);
    for (const form of [{ redirect_uri: 'http://127.0.0.1:8765/other' }, { client_id: c2.registration.clientId }]) {
      const r = await postForm(s, '/oauth/token', { ...codeForm(c, code, p.verifier), ...form });
      t.is(r.body.error, 'invalid_grant', JSON.stringify(form));
    }
    // None of these consumed the code: the right exchange still works.
    const right = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
    t.is(right.status, 200);
  });

  test('authorize refusals: unknown or disabled client 0016, unregistered redirect 0017, consent type, account level 0025, no key 0007', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    const commerceOnly = await connector(s, { allowedConsentTypes: ['commerce'] });
    const unverified = await connector(s, { verified: false });
    const disabled = await connector(s);
    await disableClient(s.ctx, disabled.registration.clientId);
    const p = await pkce();
    const cases: [Record<string, unknown>, number, string][] = [
      [authorizeBody(c, p, { client_id: 'no-such-client' }), 400, 'BCK.OAUTH.0016'],
      [authorizeBody(disabled, p), 400, 'BCK.OAUTH.0016'],
      [authorizeBody(c, p, { redirect_uri: 'http://127.0.0.1:8765/callback/' }), 400, 'BCK.OAUTH.0017'],
      [authorizeBody(c, p, { redirect_uri: 'https://evil.example/cb' }), 400, 'BCK.OAUTH.0017'],
      [authorizeBody(commerceOnly, p, { scope: 'account_access' }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(c, p, { scope: 'everything' }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(unverified, p, { scope: 'account_access' }), 403, 'BCK.OAUTH.0025'],
      [authorizeBody(c, p, { spending_limit_cents: 0 }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(c, p, { spending_limit_cents: 100_000_001 }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(c, p, { duration_secs: 59 }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(c, p, { duration_secs: 31_536_001 }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(c, p, { currency: 'btc' }), 400, 'BCK.OAUTH.0018'],
      [authorizeBody(c, p, { approve: 'yes' }), 400, 'BCK.HTTP.0400'],
    ];
    for (const [body, status, code] of cases) {
      const r = await approve(s, u.apiKey, body);
      t.is(r.status, status, JSON.stringify(body));
      t.is(r.body.code, code, JSON.stringify(body));
    }
    const noKey = await fetch(`${s.proxyUrl}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(authorizeBody(c, p)),
    });
    t.is(noKey.status, 401);
    t.is(((await noKey.json()) as { code: string }).code, 'BCK.OAUTH.0007');
    // Nothing was granted by any refusal.
    t.is(await s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 0);
  });

  test('deny: 200 with a redirect carrying access_denied, state and iss; nothing is granted', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    const r = await approve(s, u.apiKey, authorizeBody(c, await pkce(), { approve: false }));
    t.is(r.status, 200);
    t.deepEqual(Object.keys(r.body), ['redirectTo']);
    const url = new URL(String(r.body.redirectTo));
    t.is(url.searchParams.get('error'), 'access_denied');
    t.is(url.searchParams.get('state'), 'st-123');
    t.is(url.searchParams.get('iss'), ISSUER);
    t.is(url.searchParams.get('code'), null);
    t.is(await s.ctx.db.em().count(OAuthGrant, { userId: u.userId }), 0);
  });

  test('account_access: a card-backed delegation for a verified account-level client', async (t) => {
    const s = stack();
    const u = await s.user();
    const c = await connector(s);
    const p = await pkce();
    const { status, body } = await approve(
      s,
      u.apiKey,
      authorizeBody(c, p, { scope: 'account_access', currency: 'eur' }),
    );
    t.is(status, 201);
    const tokens = await client.authorizationCodeGrant(c.config, new URL(String(body.redirectTo)), {
      pkceCodeVerifier: p.verifier,
      expectedState: 'st-123',
    });
    t.is(tokens.scope, 'account_access');
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
    const d = await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId });
    t.like(d, { provider: 'stripe', currency: 'eur', spendingLimitCents: 5000n });
  });

  test('a replayed code is invalid_grant and revokes the grant, its refresh tokens and its delegation', async (t) => {
    const s = stack();
    const { u, c, p, code } = await consented(s);
    const form = codeForm(c, code, p.verifier);
    const first = await postForm(s, '/oauth/token', form);
    t.is(first.status, 200);
    const replay = await postForm(s, '/oauth/token', form);
    t.is(replay.status, 400);
    t.is(replay.body.error, 'invalid_grant');
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
    t.like(grant, { status: 'Revoked', revokedReason: 'code_replay' });
    t.is((await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId })).status, 'Revoked');
    const refresh = await postForm(s, '/oauth/token', refreshForm(c, String(first.body.refresh_token)));
    t.is(refresh.body.error, 'invalid_grant');
  });

  test('a reused refresh token revokes the whole grant, the newest refresh token included', async (t) => {
    const s = stack();
    const { u, c, p, redirectTo } = await consented(s);
    const tokens = await client.authorizationCodeGrant(c.config, new URL(String(redirectTo)), {
      pkceCodeVerifier: p.verifier,
      expectedState: 'st-123',
    });
    const first = String(tokens.refresh_token);
    const second = String((await client.refreshTokenGrant(c.config, first)).refresh_token);
    const reuse = await postForm(s, '/oauth/token', refreshForm(c, first));
    t.is(reuse.body.error, 'invalid_grant');
    const newest = await postForm(s, '/oauth/token', refreshForm(c, second));
    t.is(newest.body.error, 'invalid_grant');
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
    t.like(grant, { status: 'Revoked', revokedReason: 'refresh_reuse' });
    t.is((await s.ctx.db.em().findOneOrFail(Delegation, { id: grant.delegationId })).status, 'Revoked');
  });

  test('race: parallel redemptions of one code have exactly one winner', async (t) => {
    const s = stack();
    const { u, c, p, code } = await consented(s);
    const form = codeForm(c, code, p.verifier);
    const results = await Promise.all(Array.from({ length: 8 }, () => postForm(s, '/oauth/token', form)));
    t.is(results.filter((r) => r.status === 200).length, 1);
    t.true(
      results.filter((r) => r.status !== 200).every((r) => r.body.error === 'invalid_grant'),
      JSON.stringify(results.map((r) => [r.status, r.body.error, r.body.message])),
    );
    // One refresh token was ever issued for the grant.
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
    t.is(await s.ctx.db.em().count(OAuthRefreshToken, { grantId: grant.id }), 1);
  });

  test('race: parallel refreshes of one token have exactly one winner', async (t) => {
    const s = stack();
    const { u, c, p, code } = await consented(s);
    const tokens = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
    const form = refreshForm(c, String(tokens.body.refresh_token));
    const results = await Promise.all(Array.from({ length: 8 }, () => postForm(s, '/oauth/token', form)));
    t.is(results.filter((r) => r.status === 200).length, 1);
    t.true(
      results.filter((r) => r.status !== 200).every((r) => r.body.error === 'invalid_grant'),
      JSON.stringify(results.map((r) => [r.status, r.body.error, r.body.message])),
    );
    const grant = await s.ctx.db.em().findOneOrFail(OAuthGrant, { userId: u.userId });
    // The first token and the one winner's: never two successors of one token.
    t.is(await s.ctx.db.em().count(OAuthRefreshToken, { grantId: grant.id }), 2);
  });

  test('a disabled client can no longer redeem or refresh', async (t) => {
    const s = stack();
    const { c, p, code } = await consented(s);
    await disableClient(s.ctx, c.registration.clientId);
    const r = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
    t.is(r.status, 401);
    t.is(r.body.error, 'invalid_client');
  });
});
