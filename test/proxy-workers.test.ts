// PROXY_WORKERS=N (README "Running several proxies"): one supervisor, N workers sharing its port. The cap holds
// exactly across the workers, a worker that dies is replaced, and SIGTERM stops the whole tree with exit 0.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { apiClient } from './support/http.js';
import { forEachDb } from './support/matrix.js';
import {
  type Merchants,
  PAID_ENV,
  createDelegation,
  delegationRow,
  fund,
  paymentRows,
  startMerchants,
} from './support/router-fixtures.js';

const PRICE = 10_000n; // fee 500: 2 cents of cap per call
const K = 7;
const N = 40;

let m: Merchants;
test.before(async () => {
  m = await startMerchants(PRICE);
});
test.after.always(async () => {
  await m?.close();
});

/** The process ids a process has started (Linux: its main thread's children list). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

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
    t.is((await fetch(`${proxy.url}/healthz`)).status, 200);

    const replaced = childrenOf(pid);
    proxy.child.kill('SIGTERM');
    t.deepEqual(await proxy.exited, { code: 0, signal: null });
    for (const w of replaced) t.throws(() => process.kill(w, 0), undefined, `worker ${w} is gone`);
  });
}, PAID_ENV);
