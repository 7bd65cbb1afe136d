// Authentication is decided per route: every route of both processes declares who may call it, taken here from the
// route tables themselves (not a hand list). No spelling of a non-public route's path (letter case, a trailing
// slash, `//`, a percent-encoded letter) reaches a handler without a key, through the proxy or on the admin port.
// (The defect this guards against: the admin checked the /api/v1 prefix case-sensitively while its router matched
// case-insensitively, so GET /API/V1/protocol/plans/1/balance/<addr> answered 200 without a key.)
import { getAddress } from 'viem';
import { buildAdminApp } from '../admin/app.js';
import { buildRouterRoutes } from '../proxy/routes/index.js';
import type { ServiceContext } from '../shared/context.js';
import { createDigestSigner } from '../shared/protocols/digest-signer.js';
import { createClaimStore } from '../shared/router/claims.js';
import { createConcurrencyLimiter } from '../shared/router/concurrency.js';
import { createDelegationSnapshots } from '../shared/router/delegation-snapshot.js';
import { createWalletKeyCache } from '../shared/router/wallet-keys.js';
import { createUpstream } from '../shared/upstream/index.js';
import { ENDPOINTS } from './support/endpoints.js';
import { forEachDb } from './support/matrix.js';

type Process = 'admin' | 'proxy';

interface Declared {
  readonly process: Process;
  readonly method: string;
  readonly path: string;
  readonly public: boolean;
  readonly accepts: readonly string[];
}

/** Every declared route of both processes, from the tables the processes build. */
async function declaredRoutes(ctx: ServiceContext): Promise<Declared[]> {
  const admin = buildAdminApp(ctx).routes.map((r) => ({
    process: 'admin' as const,
    method: r.method,
    path: r.path,
    public: r.access.public,
    accepts: r.access.accepts,
  }));
  const upstream = createUpstream({ allowPrivate: false });
  const signer = createDigestSigner(0);
  try {
    const table = buildRouterRoutes({
      ctx,
      claims: createClaimStore(),
      limiter: createConcurrencyLimiter(1),
      waiting: createConcurrencyLimiter(1),
      upstream,
      feeRecipient: getAddress(`0x${'11'.repeat(20)}`),
      walletKeys: createWalletKeyCache(ctx),
      delegations: createDelegationSnapshots(ctx),
      signer,
    });
    const proxy = table.routes().map((r) => ({
      process: 'proxy' as const,
      method: r.method,
      path: r.path,
      public: r.access.public,
      accepts: r.access.accepts,
    }));
    return [...admin, ...proxy];
  } finally {
    await upstream.close();
    await signer.close();
  }
}

/** A value for each path parameter, well-formed where the route checks the form. */
const SAMPLE: Record<string, string> = {
  planId: '1',
  agentId: `did:payroute:sandbox:${'0'.repeat(32)}`,
  holderAddress: getAddress(`0x${'ab'.repeat(20)}`),
  id: '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59',
  permissionHash: `0x${'cd'.repeat(32)}`,
  activate: 'true',
};

const concrete = (path: string): string =>
  path
    .split('/')
    .map((s) => (s.startsWith(':') ? (SAMPLE[s.slice(1)] ?? 'x') : s))
    .join('/');

/** Spellings of a route's path that are not the route: each literal segment re-cased and percent-encoded, `//`
 * between any two segments, a trailing slash, the whole path upper-cased. */
function variants(template: string): string[] {
  const t = template.split('/');
  const c = concrete(template).split('/');
  const out = new Set<string>([c.join('/').toUpperCase(), `${c.join('/')}/`]);
  for (let i = 1; i < t.length; i++) {
    const seg = t[i] ?? '';
    out.add([...c.slice(0, i), '', ...c.slice(i)].join('/'));
    if (seg === '' || seg.startsWith(':')) continue;
    const at = seg.search(/[a-z]/i);
    if (at === -1) continue;
    const letter = seg.charAt(at);
    const recased = letter === letter.toUpperCase() ? letter.toLowerCase() : letter.toUpperCase();
    const encoded = `%${letter.charCodeAt(0).toString(16)}`;
    for (const replacement of [recased, encoded]) {
      const parts = [...c];
      parts[i] = seg.slice(0, at) + replacement + seg.slice(at + 1);
      out.add(parts.join('/'));
    }
  }
  out.delete(c.join('/'));
  return [...out];
}

/** Whether `path` is the exact spelling of a declared route of this method (params: one non-empty segment). */
function spellsRoute(routes: readonly Declared[], method: string, path: string): boolean {
  const got = path.split('/');
  return routes.some((r) => {
    if (r.method !== method && r.method !== '*') return false;
    const want = r.path.split('/');
    return want.length === got.length && want.every((w, i) => (w.startsWith(':') ? got[i] !== '' : w === got[i]));
  });
}

/** Runs the checks 8 at a time: thousands of requests, each waiting mostly on the other processes. */
async function runAll(checks: (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < checks.length) {
      const check = checks[next];
      next += 1;
      await check?.();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

const methodsOf = (r: Declared): string[] => (r.method === '*' ? ['GET', 'POST'] : [r.method]);

async function send(base: string, method: string, path: string, key?: string) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  });
  const text = await r.text();
  let code: unknown;
  try {
    code = (JSON.parse(text) as { code?: unknown }).code;
  } catch {
    code = undefined;
  }
  return { status: r.status, code };
}

forEachDb(({ stack, test }) => {
  test('every route of both processes declares its access; only health, discovery, the connector OAuth endpoints and the pages are public', async (t) => {
    const routes = await declaredRoutes(stack().ctx);
    t.true(routes.filter((r) => r.process === 'admin').length >= 30, 'the admin table is enumerated');
    t.true(routes.filter((r) => r.process === 'proxy').length >= 7, 'the proxy table is enumerated');
    t.deepEqual(
      routes.filter((r) => r.public).map((r) => `${r.process} ${r.method} ${r.path}`),
      [
        'admin GET /healthz',
        'admin GET /.well-known/jwks.json',
        'admin GET /.well-known/oauth-authorization-server',
        'admin GET /.well-known/oauth-protected-resource',
        'admin GET /.well-known/oauth-protected-resource/api/v1',
        'admin POST /oauth/token',
        'admin POST /oauth/device_authorization',
        'admin POST /oauth/revoke',
        'admin GET /oauth/authorize',
        'admin POST /oauth/consent',
        'admin POST /oauth/sign-in',
        'admin POST /oauth/sign-out',
        'admin GET /device',
        'admin POST /device',
        'admin POST /device/decision',
        'proxy GET /healthz',
      ],
    );
    for (const r of routes.filter((x) => !x.public)) {
      t.deepEqual(r.accepts, ['apiKey'], `${r.process} ${r.method} ${r.path}`);
      t.true(/^\/(api\/v1|oauth)\//.test(r.path) || r.path === '/proxy', `${r.path} is an API path`);
    }
    const keys = routes.map((r) => `${r.process} ${r.method} ${r.path}`);
    t.is(new Set(keys).size, keys.length, 'no route is declared twice');
  });

  test('the boundary fuzz covers every declared route: ENDPOINTS has a sample for each, and no other', async (t) => {
    const routes = await declaredRoutes(stack().ctx);
    // The proxy's GET /healthz is its own; the admin's is reached through the proxy under the same key.
    const declared = [...new Set(routes.map((r) => `${r.method} ${r.path}`))].sort();
    t.deepEqual(Object.keys(ENDPOINTS).sort(), declared);
  });

  test('no spelling of a non-public route reaches a handler without a key, on either port', async (t) => {
    const routes = await declaredRoutes(stack().ctx);
    const ports = { proxy: stack().proxyUrl, admin: stack().adminUrl };
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    for (const r of routes.filter((x) => !x.public)) {
      for (const method of methodsOf(r)) {
        const exact = concrete(r.path);
        for (const path of [exact, ...variants(r.path)]) {
          for (const [port, base] of Object.entries(ports)) {
            // Invalid keys on the exact spelling; every spelling with none.
            for (const key of path === exact ? [undefined, 'garbage', 'sandbox:not-a-key'] : [undefined]) {
              checks.push(async () => {
                const got = await send(base, method, path, key);
                // The OAuth endpoints that act for a signed-in human name their 401 BCK.OAUTH.0007.
                const code = r.path.startsWith('/oauth/') ? 'BCK.OAUTH.0007' : 'BCK.AUTH.0001';
                const refused = got.status === 401 && got.code === code;
                // 404 without a credential only where the path is no API path at all (`/PROXY`, `/%70roxy`).
                const unknown = got.status === 404 && got.code === 'BCK.HTTP.0404' && !/^\/api\/v1(\/|$)/i.test(path);
                if (!refused && !unknown)
                  wrong.push(`${port} ${method} ${path} key=${key} -> ${got.status} ${got.code}`);
              });
            }
          }
        }
      }
    }
    await runAll(checks);
    t.true(checks.length > 500, `${checks.length} requests`);
    t.deepEqual(wrong.sort(), []);
  });

  test('with a key only the exact spelling reaches the route: the others are 404 or 405', async (t) => {
    const u = await stack().user();
    const routes = await declaredRoutes(stack().ctx);
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    for (const r of routes.filter((x) => !x.public)) {
      const bases = r.process === 'admin' ? [stack().proxyUrl, stack().adminUrl] : [stack().proxyUrl];
      for (const method of methodsOf(r)) {
        for (const base of bases) {
          // The exact spelling reaches the handler: whatever it answers, not the router's own refusals.
          checks.push(async () => {
            const exact = await send(base, method, concrete(r.path), u.apiKey);
            if (exact.status === 401 || exact.code === 'BCK.HTTP.0404' || exact.code === 'BCK.HTTP.0405')
              wrong.push(`${base} ${method} ${r.path} (exact) -> ${exact.status} ${exact.code}`);
          });
          for (const path of variants(r.path)) {
            // A variant may be the exact spelling of another route (a literal where that one has a parameter).
            if (spellsRoute(routes, method, path)) continue;
            checks.push(async () => {
              const got = await send(base, method, path, u.apiKey);
              const routerAnswer =
                (got.status === 404 && got.code === 'BCK.HTTP.0404') ||
                (got.status === 405 && got.code === 'BCK.HTTP.0405');
              if (!routerAnswer) wrong.push(`${base} ${method} ${path} -> ${got.status} ${got.code}`);
            });
          }
        }
      }
    }
    await runAll(checks);
    t.deepEqual(wrong.sort(), []);
  });

  test('the path GET /API/V1/protocol/plans/{id}/balance/{addr} of the review is 401 without a key', async (t) => {
    const path = `/API/V1/protocol/plans/1/balance/${SAMPLE.holderAddress}`;
    for (const base of [stack().proxyUrl, stack().adminUrl]) {
      t.deepEqual(await send(base, 'GET', path), { status: 401, code: 'BCK.AUTH.0001' });
    }
  });

  test('an unmatched API path is 401 without a key, 404 or 405 with one; outside the API a plain 404', async (t) => {
    const u = await stack().user();
    for (const base of [stack().proxyUrl, stack().adminUrl]) {
      for (const path of ['/api/v1/protocol/nothing', '/api/v1/router/nothing', '/api/v1', '/Api/V1/x']) {
        t.deepEqual(await send(base, 'GET', path), { status: 401, code: 'BCK.AUTH.0001' }, `${base}${path}`);
      }
      t.deepEqual(await send(base, 'DELETE', '/api/v1/protocol/agents'), { status: 401, code: 'BCK.AUTH.0001' });
      t.deepEqual(await send(base, 'GET', '/api/v1/protocol/nothing', u.apiKey), {
        status: 404,
        code: 'BCK.HTTP.0404',
      });
      t.deepEqual(await send(base, 'DELETE', '/api/v1/protocol/agents', u.apiKey), {
        status: 405,
        code: 'BCK.HTTP.0405',
      });
      t.deepEqual(await send(base, 'GET', '/nothing-here'), { status: 404, code: 'BCK.HTTP.0404' });
    }
  });
});
