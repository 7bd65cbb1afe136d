// Disabling an OAuth client (`oauth-clients disable`) revokes every live grant of the client in the same
// transaction: an access token issued before stops at its next call in every process (a commerce payment meets the
// revoked delegation, whatever a process's 1 s credential cache still holds; past that cache every route is 401
// invalid_token), refresh is refused, and the user's bindings say revoked, `client_disabled`. A grant left live
// with its client disabled (approved while the disable ran) is refused by the token check all the same. On SQLite
// and PostgreSQL, through the real CLI, the stack's proxy and a second proxy process on the same database.
import {
  Delegation,
  OAuthClient,
  OAuthGrant,
  OAuthRefreshToken,
  RouterPayment,
} from '../../shared/db/entities/index.js';
import { disableClient } from '../../shared/oauth/clients.js';
import { runCli } from '../support/cli.js';
import { concrete, declaredRoutes, methodsOf, send } from '../support/declared-routes.js';
import { type ApiResponse, apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { type GrantToken, codeGrant, connector, postForm, refreshForm, bindingOf } from '../support/oauth.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { PAID_ENV, fundedUser } from '../support/router-fixtures.js';

const PRICE = 10_000n; // x402: 500 atomic fee, cap charge 2 cents
const FUNDS = 100_000_000n;
const ROUTE = '/router/commerce/route';

const m = merchantsOfFile(PRICE);

let seq = 0;
const rid = () => `disable-${Date.now()}-${++seq}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded at 60 s, for a loaded machine) until `ready` holds. */
async function until(ready: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await ready()) return true;
    await sleep(50);
  }
  return ready();
}

/** A refusal of a token whose grant was revoked: 401 once no cache holds the grant, 402 from the spend before. */
const isRefusal = (r: ApiResponse<any>) =>
  (r.status === 401 &&
    r.body.code === 'BCK.AUTH.0001' &&
    (r.headers.get('www-authenticate') ?? '').startsWith('Bearer error="invalid_token"')) ||
  (r.status === 402 && r.body.code === 'BCK.ROUTER.0003' && r.body.details === 'delegation is revoked');

forEachDb(({ stack, test }) => {
  const funded = () => fundedUser(stack(), m.chain, FUNDS);
  const url = () => m.v2.url + m.v2.paidPath;
  const payments = (grantId: string) => stack().ctx.db.em().find(RouterPayment, { grantId });
  const pay = (base: string, g: GrantToken) =>
    apiClient(`${base}/api/v1`, g.token).post(ROUTE, { requestId: rid(), url: url() });

  test('disable: tokens issued before stop at the next call in every process, then 401 on every OAuth route; bindings revoked client_disabled; refresh refused', async (t) => {
    const s = stack();
    const u = await funded();
    const conn = await connector(s);
    const clientId = conn.registration.clientId;
    const commerce = await codeGrant(s, u, {}, conn);
    const account = await codeGrant(s, u, { scope: 'account_access' }, conn);
    // The same user's grant of another connector: untouched by this one's disable.
    const other = await codeGrant(s, u);
    const second = await s.spawn('proxy');
    const proxies = [s.proxyUrl, second.url];

    // Both proxy processes pay with the token (each now holds its grant in its credential cache).
    for (const p of proxies) {
      const r = await pay(p, commerce);
      t.is(r.status, 200, r.text);
      t.true(r.body.paid);
    }
    t.is((await apiClient(`${s.proxyUrl}/api/v1`, account.token).get('/protocol/plans')).status, 200);

    const disabled = await runCli(['oauth-clients', 'disable', clientId], s.env);
    t.is(disabled.code, 0, disabled.stdout + disabled.stderr);
    t.like(disabled.json, { clientId, disabled: true, grantsRevoked: 2 });

    // The very next call on each process pays nothing: 402 (the delegation is revoked, whatever the process's
    // cache still says of the grant) or 401.
    for (const p of proxies) {
      const r = await pay(p, commerce);
      t.true(isRefusal(r), `${p}: ${r.status} ${r.text}`);
    }
    t.is((await payments(commerce.grantId)).length, 2, 'nothing paid after the disable returned');

    // Once no cache holds the grant (API_KEY_CACHE_MS, 1 s): 401 invalid_token in both processes.
    for (const p of proxies) {
      t.true(await until(async () => (await pay(p, commerce)).status === 401), `${p}: 401 at last`);
    }
    // Every route an OAuth token can call refuses it, on every process that serves it.
    const routes = (await declaredRoutes(s.ctx)).filter(
      (r) => r.accepts.includes('commerce') || r.accepts.includes('account_access'),
    );
    t.true(routes.length >= 13, `${routes.length} routes`);
    const failures: string[] = [];
    for (const r of routes) {
      const bases = r.process === 'proxy' ? proxies : [s.proxyUrl, second.url, s.adminUrl];
      const tokens = [
        ...(r.accepts.includes('commerce') ? [commerce.token] : []),
        ...(r.accepts.includes('account_access') ? [account.token] : []),
      ];
      for (const base of bases)
        for (const method of methodsOf(r))
          for (const token of tokens) {
            const got = await send(base, method, concrete(r.path), token);
            if (got.status !== 401 || got.code !== 'BCK.AUTH.0001')
              failures.push(`${base} ${method} ${r.path}: ${got.status} ${String(got.code)}`);
          }
    }
    t.deepEqual(failures, []);
    t.is((await payments(commerce.grantId)).length, 2);

    // Refresh: the client is unknown to the token endpoint, and its refresh tokens are revoked.
    for (const g of [commerce, account]) {
      const r = await postForm(s, '/oauth/token', refreshForm(conn, g.refreshToken));
      t.is(r.status, 401);
      t.is(r.body.error, 'invalid_client');
    }

    // The user's bindings say so; the rows are revoked, with the reason.
    const em = s.ctx.db.em();
    for (const g of [commerce, account]) {
      const b = await bindingOf(s, u.apiKey, g.grantId);
      t.like(b, { state: 'revoked', revokedReason: 'client_disabled', clientId });
      t.is(typeof b.revokedAt, 'string');
      t.like(await em.findOneOrFail(OAuthGrant, { id: g.grantId }), {
        status: 'Revoked',
        revokedReason: 'client_disabled',
      });
      t.is((await em.findOneOrFail(Delegation, { id: g.delegationId })).status, 'Revoked');
      const refresh = await em.find(OAuthRefreshToken, { grantId: g.grantId });
      t.true(refresh.length > 0 && refresh.every((x) => x.revokedAt != null));
    }
    t.like(await bindingOf(s, u.apiKey, other.grantId), { state: 'active', revokedReason: null, revokedAt: null });
    const still = await pay(s.proxyUrl, other);
    t.is(still.status, 200, still.text);
    t.true(still.body.paid);

    // The listing shows the client disabled; disabling again revokes nothing more.
    const listed = await runCli(['oauth-clients', 'list'], s.env);
    t.is(listed.code, 0, listed.stderr);
    t.like(
      (listed.json.clients as { clientId: string }[]).find((c) => c.clientId === clientId),
      { clientId, disabled: true },
    );
    t.like(await disableClient(s.ctx, clientId), { clientId, disabled: true, grantsRevoked: 0 });
  });

  test('a grant left live with its client disabled (approved while the disable ran) is refused at once and reads as client_disabled; disable again revokes it', async (t) => {
    const s = stack();
    const u = await funded();
    const conn = await connector(s);
    const clientId = conn.registration.clientId;
    const g = await codeGrant(s, u, {}, conn);
    // A proxy without a credential cache: the grant check runs on every call, so "at once" is exact.
    const uncached = await s.spawn('proxy', { API_KEY_CACHE_MS: '0' });
    const first = await pay(uncached.url, g);
    t.is(first.status, 200, first.text);

    // The race: the client row is disabled, the grant and its delegation are left Active.
    const at = new Date();
    await s.ctx.db.em().nativeUpdate(OAuthClient, { clientId }, { disabledAt: at, updatedAt: at });
    const next = await pay(uncached.url, g);
    t.is(next.status, 401, next.text);
    t.is(next.body.code, 'BCK.AUTH.0001');
    t.is(next.body.details, 'the grant of this access token was revoked or has expired');
    t.is((await payments(g.grantId)).length, 1);
    t.like(await bindingOf(s, u.apiKey, g.grantId), {
      state: 'revoked',
      revokedReason: 'client_disabled',
      revokedAt: at.toISOString(),
    });
    t.is((await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: g.grantId })).status, 'Active');

    // Disabling again sweeps it: the grant and its delegation are revoked.
    t.like(await disableClient(s.ctx, clientId), { clientId, disabled: true, grantsRevoked: 1 });
    const em = s.ctx.db.em();
    t.like(await em.findOneOrFail(OAuthGrant, { id: g.grantId }), {
      status: 'Revoked',
      revokedReason: 'client_disabled',
    });
    t.is((await em.findOneOrFail(Delegation, { id: g.delegationId })).status, 'Revoked');
    t.is((await pay(uncached.url, g)).status, 401);
    await uncached.stop();
  });
}, PAID_ENV);
