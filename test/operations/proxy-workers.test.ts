// PROXY_WORKERS=N (README "Running several proxies"): one supervisor, N workers sharing its port. The cap holds
// exactly across the workers, a worker that dies is replaced, and SIGTERM stops the whole tree with exit 0. Under
// paid load with a worker killed: test/operations/proxy-workers-kill.test.ts; starting under CPU load:
// test/operations/proxy-workers-start.test.ts.
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { freePort } from '../support/ports.js';
import { childrenOf, until, within } from '../support/processes.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { PAID_ENV, createDelegation, delegationRow, fund, paymentRows } from '../support/router-fixtures.js';

const PRICE = 10_000n; // fee 500: 2 cents of cap per call
const K = 7;
const N = 40;

const m = merchantsOfFile(PRICE);

forEachDb(({ kind, stack, test }) => {
  test('two workers: exact cap across them, a dead worker replaced, SIGTERM stops the tree with exit 0', async (t) => {
    const s = stack();
    const proxy = await s.spawn('proxy', { PROXY_WORKERS: '2' });
    const pid = proxy.child.pid ?? -1;
    const workers = childrenOf(pid);
    t.is(workers.length, 2);

    const u = await s.user();
    await fund(s, m.chain, u, 1_000_000_000n);
    const delegationId = await createDelegation(u, 2 * K);
    const api = apiClient(`${proxy.url}/api/v1`, u.apiKey);
    const url = m.v2.url + m.v2.paidPath;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        api.post('/router/route', { requestId: `w-${kind}-${i}`, delegationId, url }),
      ),
    );
    t.deepEqual(
      results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.text),
      [],
    );
    t.is(results.filter((r) => r.status === 200).length, K);
    t.is((await delegationRow(s, delegationId)).amountSpentCents, BigInt(2 * K));
    t.is((await paymentRows(s, u.userId)).length, K);

    // A worker killed outright is replaced; the port keeps answering meanwhile.
    const victim = workers[0] ?? -1;
    process.kill(victim, 'SIGKILL');
    await until('a replacement worker', () => {
      const now = childrenOf(pid);
      return now.length === 2 && !now.includes(victim);
    });
    t.is((await fetch(`${proxy.url}/healthz`, { signal: AbortSignal.timeout(30_000) })).status, 200);

    const replaced = childrenOf(pid);
    proxy.child.kill('SIGTERM');
    t.deepEqual(await within('the proxy stopping', proxy.exited, 120_000), { code: 0, signal: null });
    for (const w of replaced) t.throws(() => process.kill(w, 0), undefined, `worker ${w} is gone`);
  });

  // Readiness is announced for the proxy's port once every worker serves it, not for the first ports the workers
  // listen on: each worker's metrics listener (PROXY_METRICS_PORT) listens before its proxy server.
  if (kind === 'sqlite') {
    test('two workers with a metrics port: the readiness line names the proxy port, which serves', async (t) => {
      const metricsPort = await freePort();
      const proxy = await stack().spawn('proxy', {
        PROXY_WORKERS: '2',
        PROXY_METRICS_PORT: String(metricsPort),
        METRICS_TOKEN: 'workers-metrics-port-token',
      });
      t.teardown(() => proxy.stop());
      t.not(new URL(proxy.url).port, String(metricsPort));
      const r = await fetch(`${proxy.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
      t.deepEqual([r.status, await r.json()], [200, { status: 'ok', service: 'proxy' }]);
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
        headers: { authorization: 'Bearer workers-metrics-port-token' },
        signal: AbortSignal.timeout(30_000),
      });
      t.is(metrics.status, 200);
      t.regex(await metrics.text(), /worker="[01]"/);
    });

    // The image's entry point takes its role word off argv before it loads the proxy: the workers must still run
    // the proxy (they re-ran the entry point with no role, printed its usage and exited, in a loop).
    test('two workers started as the container image starts the proxy: both serve, SIGTERM stops them with exit 0', async (t) => {
      const proxy = await stack().spawn('image-proxy', { PROXY_WORKERS: '2' });
      t.teardown(() => proxy.stop());
      t.is(childrenOf(proxy.child.pid ?? -1).length, 2);
      const r = await fetch(`${proxy.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
      t.is(r.status, 200);
      t.deepEqual(
        proxy
          .stderr()
          .split('\n')
          .filter((l) => l.includes('proxy worker exited')),
        [],
        proxy.stderr(),
      );
      proxy.child.kill('SIGTERM');
      t.deepEqual(await within('the proxy stopping', proxy.exited, 120_000), { code: 0, signal: null }, proxy.stderr());
    });

    test('workers that keep dying stop the proxy with exit 1: a crash loop is a failure the process manager sees', async (t) => {
      const proxy = await stack().spawn('proxy', { PROXY_WORKERS: '2' });
      t.teardown(() => proxy.stop());
      const pid = proxy.child.pid ?? -1;
      // Six deaths within the minute (the bound is five): each time a worker is killed as soon as it exists.
      const killed: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        let victim: number | undefined;
        await until('a worker to kill', () => {
          victim = childrenOf(pid).find((w) => !killed.includes(w));
          return victim !== undefined;
        });
        process.kill(victim ?? -1, 'SIGKILL');
        killed.push(victim ?? -1);
      }
      t.deepEqual(
        await within('the proxy giving up', proxy.exited, 120_000),
        { code: 1, signal: null },
        proxy.stderr(),
      );
      t.regex(proxy.stderr(), /proxy workers keep exiting; stopping/);
    });
  }
}, PAID_ENV);
