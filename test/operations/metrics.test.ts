// Who may read GET /metrics on each process: behind METRICS_TOKEN on the process's own port, open on its metrics
// port (ADMIN_METRICS_PORT / PROXY_METRICS_PORT) unless a token is set, and not served at all with neither (404, as
// any unknown path). The proxy's /metrics is its own, never forwarded to the admin process. Nothing here depends on
// the database (the processes run on SQLite); the counters are checked in metrics-counters.test.ts.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { ConfigError, loadConfig } from '../../config/index.js';
import { parseExposition, sampleValue } from '../support/prometheus.js';
import { type Stack, startStack } from '../support/stack.js';
import { freePort } from '../support/ports.js';

const TOKEN = `scrape-${randomBytes(16).toString('hex')}`;
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

let stack: Stack;
test.before(async () => {
  stack = await startStack('sqlite', { METRICS_TOKEN: TOKEN });
});
test.after.always(async () => {
  await stack?.stop();
});

async function get(url: string, authorization?: string, method = 'GET') {
  const r = await fetch(url, { method, headers: authorization === undefined ? {} : { authorization } });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text };
}

const codeOf = (text: string): unknown => (JSON.parse(text) as { code?: unknown }).code;

// Serial: each test counts the requests it made itself on the stack's processes.
test.serial(
  'METRICS_TOKEN: 401 without or with a wrong token, the Prometheus text with it, on each process',
  async (t) => {
    for (const [name, base] of [
      ['proxy', stack.proxyUrl],
      ['admin', stack.adminUrl],
    ] as const) {
      const refusals = [
        undefined,
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, -1)}${TOKEN.endsWith('0') ? '1' : '0'}`,
        `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`,
        TOKEN,
      ];
      for (const authorization of refusals) {
        const r = await get(`${base}/metrics`, authorization);
        t.is(r.status, 401, `${name} ${authorization}`);
        t.is(codeOf(r.text), 'BCK.AUTH.0003');
        t.is(r.headers.get('www-authenticate'), 'Bearer realm="metrics"');
        t.false(r.text.includes('payroute_'), 'a refusal shows no metric');
      }
      // The token is checked before the method: without it, a POST learns nothing either.
      t.is((await get(`${base}/metrics`, undefined, 'POST')).status, 401);
      const post = await get(`${base}/metrics`, `Bearer ${TOKEN}`, 'POST');
      t.is(post.status, 405);
      t.is(codeOf(post.text), 'BCK.HTTP.0405');
      t.is(post.headers.get('allow'), 'GET, HEAD');

      const ok = await get(`${base}/metrics`, `bearer ${TOKEN}`);
      t.is(ok.status, 200, ok.text);
      t.is(ok.headers.get('content-type'), PROMETHEUS_TEXT);
      t.is(ok.headers.get('cache-control'), 'no-store');
      const e = parseExposition(ok.text);
      // Every series is this process's own: the proxy answered itself rather than forwarding to the admin process.
      t.true(e.samples.length > 0);
      t.deepEqual([...new Set(e.samples.map((s) => s.labels.process))], [name]);
      t.is(e.types.get('payroute_http_requests_total'), 'counter');
      t.is(e.types.get('payroute_http_request_duration_seconds'), 'histogram');
      // Node's default metrics, under their standard names.
      t.is(e.types.get('process_cpu_user_seconds_total'), 'counter');
      t.is(e.types.get('nodejs_heap_size_used_bytes'), 'gauge');
      // The refused scrapes were counted (the successful one is counted once its own answer has gone).
      t.is(sampleValue(e, 'payroute_http_requests_total', { method: 'GET', route: '/metrics', status: '401' }), 5);
      t.is(sampleValue(e, 'payroute_http_requests_total', { method: 'POST', route: '/metrics', status: '401' }), 1);
      t.is(sampleValue(e, 'payroute_http_requests_total', { method: 'POST', route: '/metrics', status: '405' }), 1);

      const head = await get(`${base}/metrics`, `Bearer ${TOKEN}`, 'HEAD');
      t.is(head.status, 200);
      t.is(head.text, '');
    }
  },
);

test.serial(
  'a metrics port serves /metrics without a token; the main ports answer 404 as for any unknown path',
  async (t) => {
    const [proxyPort, adminPort] = [await freePort(), await freePort()];
    // METRICS_TOKEN '' is unset (config/index.ts): only the metrics ports serve /metrics.
    const proxy = await stack.spawn('proxy', { METRICS_TOKEN: '', PROXY_METRICS_PORT: String(proxyPort) });
    const admin = await stack.spawn('admin', { METRICS_TOKEN: '', ADMIN_METRICS_PORT: String(adminPort) });
    try {
      for (const [name, main, port] of [
        ['proxy', proxy.url, proxyPort],
        ['admin', admin.url, adminPort],
      ] as const) {
        const closed = await get(`${main}/metrics`, `Bearer ${TOKEN}`);
        t.is(closed.status, 404, `${name} main port`);
        t.is(codeOf(closed.text), 'BCK.HTTP.0404');
        t.is(closed.headers.get('content-type'), 'application/json; charset=utf-8');
        const unknown = await get(`${main}/metrics-${name}-nope`);
        t.is(unknown.status, 404);
        t.is(codeOf(unknown.text), codeOf(closed.text), 'the same answer as any unknown path');

        const metricsUrl = `http://127.0.0.1:${port}`;
        const open = await get(`${metricsUrl}/metrics?ignored=1`);
        t.is(open.status, 200, open.text);
        t.is(open.headers.get('content-type'), PROMETHEUS_TEXT);
        const e = parseExposition(open.text);
        t.deepEqual([...new Set(e.samples.map((s) => s.labels.process))], [name]);
        // The main port's 404 was counted there, by the process the metrics port belongs to.
        t.is(sampleValue(e, 'payroute_http_requests_total', { method: 'GET', route: '/metrics', status: '404' }), 1);
        const other = await get(`${metricsUrl}/healthz`);
        t.is(other.status, 404, 'the metrics port serves nothing else');
        t.is(codeOf(other.text), 'BCK.HTTP.0404');
      }
    } finally {
      await proxy.stop();
      await admin.stop();
    }
  },
);

test.serial('with METRICS_TOKEN and a metrics port, the metrics port wants the token too', async (t) => {
  const port = await freePort();
  const proxy = await stack.spawn('proxy', { PROXY_METRICS_PORT: String(port) });
  try {
    const metricsUrl = `http://127.0.0.1:${port}/metrics`;
    const refused = await get(metricsUrl);
    t.is(refused.status, 401);
    t.is(codeOf(refused.text), 'BCK.AUTH.0003');
    t.is((await get(metricsUrl, `Bearer ${TOKEN}`)).status, 200);
    t.is((await get(`${proxy.url}/metrics`, `Bearer ${TOKEN}`)).status, 200);
  } finally {
    await proxy.stop();
  }
});

test.serial(
  'with neither: 404 on both processes, and the proxy never forwards /metrics to an admin that serves it',
  async (t) => {
    // This proxy has no token; the stack's admin process, which it forwards to, does.
    const proxy = await stack.spawn('proxy', { METRICS_TOKEN: '' });
    const admin = await stack.spawn('admin', { METRICS_TOKEN: '' });
    try {
      for (const base of [proxy.url, admin.url]) {
        for (const method of ['GET', 'POST']) {
          const r = await get(`${base}/metrics`, `Bearer ${TOKEN}`, method);
          t.is(r.status, 404, `${base} ${method}`);
          t.is(codeOf(r.text), 'BCK.HTTP.0404');
          t.false(r.text.includes('payroute_'));
        }
      }
      // The stack's admin process does serve it, to the token: the 404 above was the proxy's own answer.
      t.is((await get(`${stack.adminUrl}/metrics`, `Bearer ${TOKEN}`)).status, 200);
    } finally {
      await proxy.stop();
      await admin.stop();
    }
  },
);

test('config: METRICS_TOKEN is at least 16 token characters; each metrics port differs from every other port', (t) => {
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };
  t.deepEqual(problems({ METRICS_TOKEN: 'a'.repeat(16), ADMIN_METRICS_PORT: '9464', PROXY_METRICS_PORT: '9465' }), []);
  t.is(loadConfig({ METRICS_TOKEN: '' }).METRICS_TOKEN, undefined, 'empty is unset');
  for (const token of ['a'.repeat(15), `${'a'.repeat(16)} x`, `${'a'.repeat(16)}"`]) {
    t.deepEqual(
      problems({ METRICS_TOKEN: token }).map((p) => p.split(' ')[0]),
      ['METRICS_TOKEN'],
    );
  }
  for (const env of [
    { ADMIN_METRICS_PORT: '9464', PROXY_METRICS_PORT: '9464' },
    { ADMIN_METRICS_PORT: '3000' },
    { PROXY_METRICS_PORT: '3000' },
    { PROXY_METRICS_PORT: '3001' },
  ]) {
    t.deepEqual(
      problems(env).map((p) => p.split(' ')[0]),
      ['ADMIN_METRICS_PORT'],
      JSON.stringify(env),
    );
  }
  // 0 is any free port: never a clash.
  t.deepEqual(problems({ ADMIN_PORT: '0', PROXY_PORT: '0', ADMIN_METRICS_PORT: '0', PROXY_METRICS_PORT: '0' }), []);
  t.is(loadConfig({}).LOG_FORMAT, 'auto');
  t.deepEqual(
    problems({ LOG_FORMAT: 'xml' }).map((p) => p.split(' ')[0]),
    ['LOG_FORMAT'],
  );
});
