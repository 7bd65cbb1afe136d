// OAuth access tokens as credentials, across every route of both processes (the route tables enumerated, not a
// hand list). A valid token is a caller whose kind is its grant's consent type (`commerce`, `account_access`); the
// expected answer of every route to every credential comes from the route's declaration: a kind it accepts reaches
// the handler (whatever the handler then answers), any other is refused with 403 and the declaration's code
// (BCK.OAUTH.0031 on the commerce route, else BCK.OAUTH.0030 for a token and BCK.AUTH.0002 for a key). An expired
// token, one signed by another key, a token of another type, or one whose grant was revoked is 401 with
// `error="invalid_token"` (RFC 6750 §3.1). Tokens of another user's grants reach only their own user's objects.
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createTokenSigner, rotateSigningKey } from '../../shared/keys/signing-keys.js';
import { revokeBinding } from '../../shared/oauth/bindings.js';
import { concrete, declaredRoutes, expectedFor, methodsOf, runAll } from '../support/declared-routes.js';
import { forEachDb } from '../support/matrix.js';
import { codeForm, consented, expiredAndForged, postForm } from '../support/oauth.js';
import type { Stack } from '../support/stack.js';
import { delegation } from '../support/x402.js';

async function accessToken(s: Stack, extra: Record<string, unknown> = {}, user?: Awaited<ReturnType<Stack['user']>>) {
  const { c, p, code, u } = await consented(s, extra, user);
  const r = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
  return { token: String(r.body.access_token), user: u, clientId: c.registration.clientId };
}

forEachDb(({ stack, test }) => {
  test('every non-public route answers each credential kind as its declaration says, and invalid tokens with 401 invalid_token', async (t) => {
    const s = stack();
    const commerce = await accessToken(s);
    const account = await accessToken(s, { scope: 'account_access' }, commerce.user);
    const otherUsers = await accessToken(s);
    const otherUsersAccount = await accessToken(s, { scope: 'account_access' }, otherUsers.user);

    const { expired, forged } = await expiredAndForged(s, commerce.token);
    // Not an access token: a delegation token of this service has another typ and audience.
    const claims = decodeJwt(commerce.token);
    const wrongTyp = await createTokenSigner(s.ctx).sign(
      { grant_id: claims.grant_id },
      { subject: String(claims.sub), audience: String(claims.aud), ttlSecs: 600 },
    );
    // Revoked: the binding is revoked; within API_KEY_CACHE_MS (1 s) every process has let go of it.
    const revokedGrant = await accessToken(s);
    const bindingId = String(decodeJwt(revokedGrant.token).grant_id);
    const r = await fetch(`${s.proxyUrl}/oauth/bindings/${bindingId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(await s.user()).apiKey}` },
    });
    t.is(r.status, 404, 'another user cannot revoke it');
    await revokeBinding(s.ctx, revokedGrant.user.userId, bindingId);
    await new Promise((resolve) => setTimeout(resolve, 1100));

    const valid = {
      apiKey: { kind: 'apiKey', token: commerce.user.apiKey },
      commerce: { kind: 'commerce', token: commerce.token },
      account_access: { kind: 'account_access', token: account.token },
      "another user's commerce": { kind: 'commerce', token: otherUsers.token },
      "another user's account_access": { kind: 'account_access', token: otherUsersAccount.token },
    };
    const invalid = { expired, forged, 'wrong typ': wrongTyp, revoked: revokedGrant.token };
    const routes = (await declaredRoutes(s.ctx)).filter((x) => !x.public);
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    let reached = 0;
    for (const route of routes) {
      const bases = route.process === 'admin' ? [s.proxyUrl, s.adminUrl] : [s.proxyUrl];
      for (const method of methodsOf(route)) {
        for (const base of bases) {
          const url = `${base}${concrete(route.path)}`;
          for (const [name, { kind, token }] of Object.entries(valid)) {
            const want = expectedFor(route, kind);
            checks.push(async () => {
              const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
              const body = (await res.json()) as { code?: string };
              if (want.reaches) {
                // The handler's own answer to an empty request (a 400, a 404 for the sample ids, a 200 list):
                // never the declaration's refusals, never a 5xx.
                reached += 1;
                const refused =
                  res.status === 401 || ['BCK.OAUTH.0030', 'BCK.OAUTH.0031', 'BCK.AUTH.0002'].includes(body.code ?? '');
                if (refused || res.status >= 500)
                  wrong.push(`${name} ${method} ${url} -> ${res.status} ${body.code} (should reach)`);
              } else if (res.status !== 403 || body.code !== want.code) {
                wrong.push(`${name} ${method} ${url} -> ${res.status} ${body.code} (want 403 ${want.code})`);
              }
            });
          }
          for (const [name, token] of Object.entries(invalid)) {
            checks.push(async () => {
              const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
              const body = (await res.json()) as { code?: string };
              const code = route.path.startsWith('/oauth/') ? 'BCK.OAUTH.0007' : 'BCK.AUTH.0001';
              const challenge = res.headers.get('www-authenticate') ?? '';
              if (res.status !== 401 || body.code !== code || !challenge.startsWith('Bearer error="invalid_token"'))
                wrong.push(`${name} ${method} ${url} -> ${res.status} ${body.code} ${challenge}`);
            });
          }
        }
      }
    }
    await runAll(checks);
    t.true(checks.length > 400, `${checks.length} requests`);
    t.true(reached > 0, 'some routes accept OAuth tokens');
    t.deepEqual(wrong.sort(), []);
  });
});

forEachDb(({ stack, test }) => {
  test("a token reaches only its own grant's delegation: never another user's, nor its own user's other ones", async (t) => {
    const s = stack();
    const commerce = await accessToken(s);
    const account = await accessToken(s, { scope: 'account_access' }, commerce.user);
    const stranger = await accessToken(s);
    const strangerAccount = await accessToken(s, { scope: 'account_access' }, stranger.user);
    // The user's own delegation, made with their key: no connector's.
    const own = await delegation(commerce.user.api, { provider: 'erc4337', spendingLimitCents: 100 });
    const grantDelegation = (token: string) => String(decodeJwt(token).delegation_id);
    const read = async (token: string, id: string) => {
      const r = await fetch(`${s.proxyUrl}/api/v1/delegation/${id}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: r.status, body: (await r.json()) as { delegationId?: string; code?: string } };
    };

    for (const token of [commerce.token, account.token]) {
      const mine = await read(token, grantDelegation(token));
      t.is(mine.status, 200);
      t.is(mine.body.delegationId, grantDelegation(token));
      t.is((await read(token, own)).status, 404, "the user's other delegations are not the grant's");
    }
    t.is((await read(commerce.token, grantDelegation(account.token))).status, 404, "the user's other grant's");
    // Another user's tokens: every one of this user's delegations is unknown to them, with the body of an unknown id.
    const unknown = await read(stranger.token, '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59');
    for (const token of [stranger.token, strangerAccount.token]) {
      for (const id of [own, grantDelegation(commerce.token), grantDelegation(account.token)]) {
        const r = await read(token, id);
        t.is(r.status, 404);
        t.is(r.body.code, unknown.body.code);
      }
    }
    // The user's key reads them all, as before.
    for (const id of [own, grantDelegation(commerce.token), grantDelegation(account.token)])
      t.is((await read(commerce.user.apiKey, id)).status, 200);
  });
});

forEachDb(({ stack, test }) => {
  test('a token is not honoured past its exp, even when the proxy verified it a moment before', async (t) => {
    const s = stack();
    const commerce = await accessToken(s);
    const claims = decodeJwt(commerce.token);
    const short = await createTokenSigner(s.ctx).sign(
      {
        client_id: claims.client_id,
        scope: claims.scope,
        grant_id: claims.grant_id,
        delegation_id: claims.delegation_id,
      },
      { subject: String(claims.sub), audience: String(claims.aud), ttlSecs: 2, typ: 'at+jwt' },
    );
    const list = () => fetch(`${s.proxyUrl}/api/v1/router/payments`, { headers: { authorization: `Bearer ${short}` } });
    t.is((await list()).status, 200);
    // Wait until the exp (whole seconds) has passed on this clock, which the processes share.
    const exp = Number(decodeJwt(short).exp) * 1000;
    while (Date.now() <= exp + 50) await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await list();
    t.is(after.status, 401);
    t.true((after.headers.get('www-authenticate') ?? '').startsWith('Bearer error="invalid_token"'));
  });

  test('a signing key rotated in by another process verifies at once; tokens of the retired key still do', async (t) => {
    const s = stack();
    const before = await accessToken(s);
    const read = (token: string) =>
      fetch(`${s.proxyUrl}/api/v1/router/payments`, { headers: { authorization: `Bearer ${token}` } });
    t.is((await read(before.token)).status, 200, 'the proxy has loaded (and cached) the key set');
    const kid = await rotateSigningKey(s.ctx, 0);
    // A process that loads the keys now (this one) signs with the new key; the proxy has never seen that kid.
    const claims = decodeJwt(before.token);
    const after = {
      token: await createTokenSigner(s.ctx).sign(
        {
          client_id: claims.client_id,
          scope: claims.scope,
          grant_id: claims.grant_id,
          delegation_id: claims.delegation_id,
        },
        { subject: String(claims.sub), audience: String(claims.aud), ttlSecs: 600, typ: 'at+jwt' },
      ),
    };
    t.is(decodeProtectedHeader(after.token).kid, kid);
    t.is((await read(after.token)).status, 200);
    t.is((await read(before.token)).status, 200);
  });
});
