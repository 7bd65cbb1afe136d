// Authentication is decided per route: every route of both processes declares who may call it, taken here from the
// route tables themselves (not a hand list). No spelling of a non-public route's path (letter case, a trailing
// slash, `//`, a percent-encoded letter) reaches a handler without a key, through the proxy or on the admin port;
// and no path with a dot segment, a backslash or an encoded separator reaches any route's handler, with a key or
// without, on either port: it is not found, never resolved into the route it names (the defect:
// /api/v1/protocol/../router/payments was the router's payments list through the proxy, 404 on the admin port).
// (The defect this guards against: the admin checked the /api/v1 prefix case-sensitively while its router matched
// case-insensitively, so GET /API/V1/protocol/plans/1/balance/<addr> answered 200 without a key.)
import {
  type Declared,
  SAMPLE,
  concrete,
  declaredRoutes,
  methodsOf,
  runAll,
  send,
  sendRaw,
} from '../support/declared-routes.js';
import { ENDPOINTS } from '../support/endpoints/index.js';
import { forEachDb } from '../support/matrix.js';

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

/**
 * Spellings of a route's path that a URL parser (or a path filter in front) would read as that route, or as another:
 * a dot segment (`.`, `..`, in `%2e` spellings of any case) inserted after the first segment and before the last,
 * a trailing one, a separator written `\`, `%5c` or `%2f`, and a walk back from a sibling area of the API
 * (`/api/v1/router/../protocol/agents`).
 */
function dotVariants(template: string): string[] {
  const c = concrete(template);
  const parts = c.split('/');
  const out = new Set<string>([`${c}/.`, `${c}/%2e`, `${c}/x/..`, `${c}/x/%2E%2e`]);
  for (const i of new Set([Math.min(2, parts.length - 1), parts.length - 1])) {
    const before = parts.slice(0, i).join('/');
    const after = parts.slice(i).join('/');
    for (const seg of ['.', '%2e', '%2E']) out.add(`${before}/${seg}/${after}`);
    for (const back of ['..', '%2e%2e', '%2E%2e', '.%2e', '%2e.']) out.add(`${before}/x/${back}/${after}`);
    // In place of the `/` between two segments (before the first, it would be no origin-form target at all).
    if (before !== '') for (const sep of ['\\', '%5c', '%5C', '%2f', '%2F']) out.add(`${before}${sep}${after}`);
  }
  if (parts[1] === 'api' && parts[2] === 'v1' && parts.length > 3) {
    const rest = parts.slice(3).join('/');
    for (const other of ['router', 'protocol', 'x']) {
      if (other !== parts[3]) out.add(`/api/v1/${other}/../${rest}`);
      out.add(`/api/v1/${other}/%2e%2e/${rest}`);
    }
  }
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

/**
 * The routes an OAuth access token may call, by its consent type (README, "What a connector may call"); every other
 * non-public route takes only the user's API key. Listed here so a declaration that widens what a connector may do
 * fails a test until the README's table says so too.
 */
const OAUTH_ROUTES: Readonly<Record<string, readonly string[]>> = {
  'proxy POST /api/v1/router/commerce/route': ['commerce'],
  'proxy GET /api/v1/router/payments': ['apiKey', 'commerce'],
  'proxy GET /api/v1/router/payments/summary': ['apiKey', 'commerce'],
  'admin GET /api/v1/delegation/:id': ['apiKey', 'commerce', 'account_access'],
  'admin GET /api/v1/protocol/agents': ['apiKey', 'account_access'],
  'admin GET /api/v1/protocol/agents/:agentId': ['apiKey', 'account_access'],
  'admin GET /api/v1/protocol/agents/:agentId/plans': ['apiKey', 'account_access'],
  'admin GET /api/v1/protocol/plans': ['apiKey', 'account_access'],
  'admin GET /api/v1/protocol/plans/:planId': ['apiKey', 'account_access'],
  'admin GET /api/v1/protocol/plans/:planId/agents': ['apiKey', 'account_access'],
  'admin GET /api/v1/protocol/plans/:planId/balance/:holderAddress': ['apiKey', 'account_access'],
  'admin POST /api/v1/protocol/plans/:planId/order': ['apiKey', 'account_access'],
  'admin POST /api/v1/x402/permissions': ['apiKey', 'account_access'],
};

forEachDb(({ stack, test }) => {
  test('every route of both processes declares its access; only health, discovery, the catalog, the connector OAuth endpoints, the pages and the API reference are public', async (t) => {
    const routes = await declaredRoutes(stack().ctx);
    t.true(routes.filter((r) => r.process === 'admin').length >= 30, 'the admin table is enumerated');
    t.true(routes.filter((r) => r.process === 'proxy').length >= 7, 'the proxy table is enumerated');
    t.deepEqual(
      routes.filter((r) => r.public).map((r) => `${r.process} ${r.method} ${r.path}`),
      [
        'admin GET /healthz',
        'admin GET /readyz',
        'admin GET /.well-known/jwks.json',
        'admin GET /.well-known/oauth-authorization-server',
        'admin GET /.well-known/oauth-protected-resource',
        'admin GET /.well-known/oauth-protected-resource/api/v1',
        'admin GET /.well-known/oauth-protected-resource/mcp',
        'admin GET /.well-known/agent-services-catalog.json',
        'admin POST /oauth/token',
        'admin POST /oauth/device_authorization',
        'admin POST /oauth/revoke',
        'admin POST /oauth/register',
        'admin GET /oauth/authorize',
        'admin POST /oauth/consent',
        'admin POST /oauth/sign-in',
        'admin POST /oauth/sign-out',
        'admin GET /device',
        'admin POST /device',
        'admin POST /device/decision',
        'admin GET /api/v1/catalog/services',
        'admin GET /api/v1/catalog/services/:slug',
        'admin GET /api/v1/catalog/categories',
        'admin GET /api/v1/openapi.json',
        'admin GET /docs',
        'admin GET /docs/rapidoc-min.js',
        'proxy GET /healthz',
        'proxy GET /readyz',
      ],
    );
    for (const r of routes.filter((x) => !x.public)) {
      const want = OAUTH_ROUTES[`${r.process} ${r.method} ${r.path}`] ?? ['apiKey'];
      t.deepEqual(r.accepts, want, `${r.process} ${r.method} ${r.path}`);
      t.true(/^\/(api\/v1|oauth)\//.test(r.path) || r.path === '/proxy', `${r.path} is an API path`);
    }
    const keys = routes.map((r) => `${r.process} ${r.method} ${r.path}`);
    t.is(new Set(keys).size, keys.length, 'no route is declared twice');
  });

  test('the boundary fuzz covers every declared route: ENDPOINTS has a sample for each, and no other', async (t) => {
    const routes = await declaredRoutes(stack().ctx);
    // The proxy's GET /healthz and /readyz are its own; the admin's are reached on its port under the same keys.
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

  test('no path with a dot segment, a backslash or an encoded separator reaches a handler, with a key, on either port: 404', async (t) => {
    const u = await stack().user();
    const routes = await declaredRoutes(stack().ctx);
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    for (const r of routes) {
      const bases = r.process === 'admin' ? [stack().proxyUrl, stack().adminUrl] : [stack().proxyUrl];
      for (const method of methodsOf(r)) {
        for (const base of bases) {
          for (const path of dotVariants(r.path)) {
            checks.push(async () => {
              const got = await sendRaw(base, method, path, u.apiKey);
              if (got.status !== 404 || got.code !== 'BCK.HTTP.0404')
                wrong.push(`${base} ${method} ${path} -> ${got.status} ${got.code}`);
            });
          }
        }
      }
    }
    await runAll(checks);
    t.true(checks.length > 2000, `${checks.length} requests`);
    t.deepEqual(wrong.sort(), []);
  });

  test('without a key those paths are 401 under /api/v1 and 404 elsewhere, on either port: never a handler', async (t) => {
    const routes = await declaredRoutes(stack().ctx);
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    for (const r of routes) {
      for (const method of methodsOf(r)) {
        for (const base of [stack().proxyUrl, stack().adminUrl]) {
          for (const path of dotVariants(r.path).filter((_, i) => i % 4 === 0)) {
            checks.push(async () => {
              const got = await sendRaw(base, method, path);
              const api = /^\/api\/v1(\/|$)/i.test(path);
              const unknown = got.status === 404 && got.code === 'BCK.HTTP.0404' && !api;
              const refused = got.status === 401 && got.code === 'BCK.AUTH.0001' && api;
              // The proxy's own paths (`/proxy/...`) ask for a key first, as for any path of its own it has no route for.
              const proxyOwn = base === stack().proxyUrl && /^\/proxy(\/|$)/.test(path) && got.status === 401;
              if (!unknown && !refused && !proxyOwn)
                wrong.push(`${base} ${method} ${path} -> ${got.status} ${got.code}`);
            });
          }
        }
      }
    }
    await runAll(checks);
    t.deepEqual(wrong.sort(), []);
  });

  test("the red team's paths: 404 with a key on both ports, never the route they resolve to", async (t) => {
    const u = await stack().user();
    const paths = [
      '/api/v1/protocol/../router/payments',
      '/api/v1/router/../router/payments',
      '/api/v1/x/../router/route',
      '/api/v1/router/../protocol/agents',
      '/api/v1/router/%2e%2e/router/payments',
      '/api/v1/router/%2E%2e/router/payments',
      '/api/v1/router/.%2e/router/payments',
      '/api/v1/./router/payments',
      '/api/v1/router\\payments',
      '/api/v1/router%5cpayments',
      '/api/v1/router%2fpayments',
      '/api/v1/protocol%2fagents',
      '/api/v1/router/payments/.',
      '/api/v1/router/payments/x/..',
      '/api/v1/protocol/agents/%2e',
      'http://payroute.test/api/v1/protocol/../router/payments',
      'http://payroute.test/api/v1/x/../protocol/agents',
    ];
    const wrong: string[] = [];
    const checks: (() => Promise<void>)[] = [];
    for (const base of [stack().proxyUrl, stack().adminUrl]) {
      for (const path of paths) {
        for (const method of ['GET', 'POST']) {
          checks.push(async () => {
            const got = await sendRaw(base, method, path, u.apiKey);
            if (got.status !== 404 || got.code !== 'BCK.HTTP.0404')
              wrong.push(`${base} ${method} ${path} -> ${got.status} ${got.code}`);
          });
        }
      }
    }
    await runAll(checks);
    t.deepEqual(wrong.sort(), []);
    for (const base of [stack().proxyUrl, stack().adminUrl]) {
      // The plain spellings, in origin-form and absolute-form, are the routes.
      for (const path of ['/api/v1/protocol/agents', 'http://payroute.test/api/v1/protocol/agents']) {
        t.is((await sendRaw(base, 'GET', path, u.apiKey)).status, 200, `${base} ${path}`);
      }
    }
    t.is((await sendRaw(stack().proxyUrl, 'GET', '/api/v1/router/payments', u.apiKey)).status, 200);
    t.is((await sendRaw(stack().proxyUrl, 'GET', 'http://payroute.test/api/v1/router/payments', u.apiKey)).status, 200);
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
