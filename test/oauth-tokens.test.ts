// OAuth access tokens as credentials, across every route of both processes (the route tables enumerated, not a
// hand list). A valid token (commerce, account_access, another user's) is a caller of kind `oauth`: a route
// whose declaration does not accept that kind answers 403 BCK.OAUTH.0030 before it reads anything. An expired
// token, one signed by another key, or one whose grant was revoked is 401 with `error="invalid_token"`
// (RFC 6750 §3.1). No route accepts OAuth tokens yet, so every valid one is refused.
import { SignJWT, decodeJwt, generateKeyPair } from 'jose';
import { createTokenSigner } from '../shared/keys/signing-keys.js';
import { revokeBinding } from '../shared/oauth/bindings.js';
import { concrete, declaredRoutes, methodsOf, runAll } from './support/declared-routes.js';
import { forEachDb } from './support/matrix.js';
import { codeForm, consented, postForm } from './support/oauth.js';
import type { Stack } from './support/stack.js';

async function accessToken(s: Stack, extra: Record<string, unknown> = {}) {
  const { c, p, code, u } = await consented(s, extra);
  const r = await postForm(s, '/oauth/token', codeForm(c, code, p.verifier));
  return { token: String(r.body.access_token), user: u, clientId: c.registration.clientId };
}

forEachDb(({ stack, test }) => {
  test('every non-public route refuses valid OAuth tokens with 403 0030 and invalid ones with 401 invalid_token', async (t) => {
    const s = stack();
    const commerce = await accessToken(s);
    const account = await accessToken(s, { scope: 'account_access' });
    const otherUsers = await accessToken(s);

    // Expired: the service's own key, the grant's own claims, an exp in the past.
    const claims = decodeJwt(commerce.token);
    const signer = createTokenSigner(s.ctx);
    const expired = await signer.sign(
      {
        client_id: claims.client_id,
        scope: claims.scope,
        grant_id: claims.grant_id,
        delegation_id: claims.delegation_id,
      },
      { subject: String(claims.sub), audience: String(claims.aud), ttlSecs: -60, typ: 'at+jwt' },
    );
    // Forged: the same claims and a published kid, signed by a key that is not the service's.
    const { privateKey } = await generateKeyPair('ES256');
    const jwks = (await (await fetch(`${s.proxyUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: jwks.keys[0]?.kid ?? 'x' })
      .sign(privateKey);
    // Not an access token: a delegation token of this service has another typ and audience.
    const wrongTyp = await signer.sign(
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

    const valid = { commerce: commerce.token, account_access: account.token, 'another user': otherUsers.token };
    const invalid = { expired, forged, 'wrong typ': wrongTyp, revoked: revokedGrant.token };
    const routes = (await declaredRoutes(s.ctx)).filter((x) => !x.public);
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    for (const route of routes) {
      const bases = route.process === 'admin' ? [s.proxyUrl, s.adminUrl] : [s.proxyUrl];
      for (const method of methodsOf(route)) {
        for (const base of bases) {
          const url = `${base}${concrete(route.path)}`;
          for (const [name, token] of Object.entries(valid)) {
            checks.push(async () => {
              const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
              const body = (await res.json()) as { code?: string };
              if (res.status !== 403 || body.code !== 'BCK.OAUTH.0030')
                wrong.push(`${name} ${method} ${url} -> ${res.status} ${body.code}`);
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
    t.deepEqual(wrong.sort(), []);
  });
});
