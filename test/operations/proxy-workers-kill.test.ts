// PROXY_WORKERS=2 under a steady stream of paid calls, one worker killed outright (SIGKILL) while it has paid calls
// at the merchant, on SQLite (both workers on one file) and PostgreSQL. The supervisor replaces it and the
// replacement serves; no call hangs (each gets an answer or a connection error); an answered call paid exactly
// once; a call cut by the kill, retried with its requestId as a client must, gets its original payment (409
// BCK.ROUTER.0002 naming it) or is paid once; and the records are whole (test/support/payment-records.ts).
import { request } from 'node:http';
import test from 'ava';
import { forEachDb } from '../support/matrix.js';
import { assertPaymentsWhole } from '../support/payment-records.js';
import { alive, childrenOf, connectionOwner, sleep, until, within } from '../support/processes.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  createDelegation,
  fund,
  relayMerchant,
  startMerchants,
} from '../support/router-fixtures.js';

const PRICE = 10_000n;
const IN_FLIGHT = 6;
/** Paid requests that go through before the relay starts holding them: the kill comes well inside the load. */
const THROUGH = 10;
/** Held at the merchant when a worker is killed. */
const HELD_AT_KILL = 4;
/** Calls made once the replacement serves, so the stream runs through it too. */
const AFTER_REPLACEMENT = 12;
/** Bounds one call: past it the call hung (the router's own upstream bounds are far shorter with these merchants). */
const CALL_LIMIT_MS = 90_000;
const METRICS_TOKEN = 'workers-kill-metrics-token';
/** Fresh connections opened around the kill (a third before it). */
const BURST = 300;

let m: Merchants;
/** The v2 merchant behind a relay that, once THROUGH paid requests went through, holds the next ones until open(). */
let relay: ScriptedMerchant;
let holding = false;
let passed = 0;
/** Paid requests the relay received (each one is sent on to the merchant, which settles it). */
let paidSeen = 0;
/** The held paid requests: the proxy-side port of their connection, and what lets them go on. */
const held: { port: number; go: () => void }[] = [];
const open = () => {
  holding = false;
  for (const h of held.splice(0)) h.go();
};

test.before(async () => {
  m = await startMerchants(PRICE);
  relay = await relayMerchant(m.v2.url, async (req) => {
    if (req.headers['payment-signature'] === undefined) return;
    paidSeen += 1;
    if (holding && ++passed > THROUGH) {
      await new Promise<void>((go) => held.push({ port: req.socket.remotePort ?? 0, go }));
    }
  });
});
test.after.always(async () => {
  open();
  await relay?.close();
  await m?.close();
});

type Outcome = { status: number; body: Record<string, unknown> } | { error: string };

/** POST /router/route on a fresh fetch; a connection error is an outcome, a call past CALL_LIMIT_MS a hang. */
async function route(base: string, apiKey: string, body: Record<string, unknown>): Promise<Outcome> {
  try {
    const r = await fetch(`${base}/api/v1/router/route`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_LIMIT_MS),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  } catch (err) {
    if (err instanceof Error && err.name === 'TimeoutError') return { error: 'hang' };
    const cause = err instanceof Error ? (err.cause as { code?: string } | undefined) : undefined;
    return { error: `connection: ${cause?.code ?? String(err)}` };
  }
}

/** A GET on a connection of its own: its status and body, a connection error, or a hang past CALL_LIMIT_MS. */
function freshGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string } | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers: { ...headers, connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve(`connection: ${err.code}`));
    });
    req.setTimeout(CALL_LIMIT_MS, () => {
      resolve('hang');
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`connection: ${err.code}`));
    req.end();
  });
}

/** The `worker` label (slot) of the process that answered GET /metrics on a connection of its own. */
async function metricsSlot(base: string): Promise<string | undefined> {
  const r = await freshGet(`${base}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` });
  return typeof r === 'string' ? undefined : /\bworker="(\d+)"/.exec(r.text)?.[1];
}

/** The supervisor's log lines saying a worker exited (it logs one for each worker it replaces). */
function workerExits(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.includes('proxy worker exited'));
}

forEachDb(
  ({ kind, stack, test }) => {
    test('a worker SIGKILLed under paid load: replaced, no call hangs, each answered call paid once, retries get their payment, records whole', async (t) => {
      const s = stack();
      const u = await s.user();
      await fund(s, m.chain, u, 1_000_000_000n);
      const delegationId = await createDelegation(u, 100_000);
      const url = `${relay.url}/paid`;
      const settledByMerchant = () => m.chain.transfers.filter((x) => x.from === u.walletAddress);
      passed = 0;
      paidSeen = 0;
      holding = true;

      const proxy = await s.spawn('proxy', { PROXY_WORKERS: '2', METRICS_TOKEN });
      t.teardown(() => proxy.stop());
      const supervisor = proxy.child.pid ?? -1;
      const workers = childrenOf(supervisor);
      t.is(workers.length, 2);

      // The stream: IN_FLIGHT callers, each making one call after another, until AFTER_REPLACEMENT calls were
      // started once the replacement serves.
      const outcomes = new Map<string, Outcome>();
      let started = 0;
      let stopAt = Number.POSITIVE_INFINITY;
      const caller = async () => {
        while (started < stopAt) {
          const requestId = `kill-${kind}-${started++}`;
          outcomes.set(requestId, await route(proxy.url, u.apiKey, { requestId, delegationId, url }));
        }
      };
      const kill = async () => {
        await until('paid calls held at the merchant', () => held.length >= HELD_AT_KILL, 120_000, 10);
        // The worker that holds the most of them (each held request's connection is one of a worker's own).
        const owners = held.map((h) => connectionOwner(h.port, workers));
        const victim = workers
          .map((w) => ({ w, n: owners.filter((o) => o === w).length }))
          .sort((a, b) => b.n - a.n)[0];
        if (victim === undefined || victim.n === 0) throw new Error(`no held call traced to a worker: ${owners}`);
        // New connections keep arriving as the worker dies: none may be left hanging (one handed to the dying
        // worker must fail or be served by another).
        const burst: Promise<{ status: number; text: string } | string>[] = [];
        for (let i = 0; i < BURST; i += 1) {
          if (i === BURST / 3) process.kill(victim.w, 'SIGKILL');
          burst.push(freshGet(`${proxy.url}/healthz`));
          if (i % 20 === 0) await sleep(1);
        }
        await until('the killed worker gone', () => !alive(victim.w));
        // The merchant goes on with the paid requests it holds and settles them, the killed worker's too.
        open();
        await until('a replacement worker', () => {
          const now = childrenOf(supervisor);
          return now.length === 2 && !now.includes(victim.w);
        });
        // The readiness returns: both slots answer again, the killed worker's slot from its replacement.
        const slots = new Set<string>();
        await until('both worker slots answering', async () => {
          const slot = await metricsSlot(proxy.url);
          if (slot !== undefined) slots.add(slot);
          return slots.size === 2;
        });
        t.deepEqual([...slots].sort(), ['0', '1']);
        t.is((await fetch(`${proxy.url}/readyz`, { signal: AbortSignal.timeout(30_000) })).status, 200);
        stopAt = started + AFTER_REPLACEMENT;
        const probes = await Promise.all(burst);
        return { ...victim, hung: probes.filter((r) => r === 'hang').length, probes: probes.length };
      };
      const killer = kill().finally(() => {
        // Whatever happened, the stream ends and nothing stays held.
        if (stopAt === Number.POSITIVE_INFINITY) stopAt = started;
        open();
      });
      const [victim] = await within(
        'the paid stream',
        Promise.all([killer, Promise.all(Array.from({ length: IN_FLIGHT }, caller))]),
        600_000,
      );
      t.log(`${outcomes.size} calls; worker ${victim.w} killed holding ${victim.n} paid calls at the merchant`);
      t.is(victim.hung, 0, `of ${victim.probes} connections opened as the worker died, ${victim.hung} hung`);

      // Every call got an answer or a connection error; every answer was a paid 200.
      const all = [...outcomes.entries()];
      t.deepEqual(
        all.filter(([, o]) => 'error' in o && o.error === 'hang').map(([id]) => id),
        [],
        'no call hung',
      );
      t.deepEqual(
        all.filter(([, o]) => 'status' in o && o.status !== 200).map(([id, o]) => [id, o]),
        [],
        'every answered call was a 200',
      );
      const cut = all.filter(([, o]) => 'error' in o).map(([id]) => id);
      t.true(cut.length >= victim.n, `the killed worker's held calls were cut (${cut.length} connection errors)`);

      // The cut calls, retried with their requestId: their original payment, or paid now (once).
      const retried = new Map<string, Outcome>();
      for (const requestId of cut)
        retried.set(requestId, await route(proxy.url, u.apiKey, { requestId, delegationId, url }));

      await until('the merchant settling every paid request it received', () => settledByMerchant().length >= paidSeen);
      const who = { userId: u.userId, walletAddress: u.walletAddress, delegationId };
      const rows = await assertPaymentsWhole(t, s, who, settledByMerchant());
      const byRequest = new Map(rows.map((r) => [r.requestId, r]));
      t.deepEqual(
        [...byRequest.keys()].sort(),
        [...outcomes.keys()].sort(),
        'every call, answered or retried, has its one payment',
      );
      const settledNonces = new Set(settledByMerchant().map((x) => x.nonce.toLowerCase()));
      const wrong: string[] = [];
      for (const [requestId, o] of [...all.filter(([, o]) => 'status' in o), ...retried.entries()]) {
        const row = byRequest.get(requestId);
        if (!('status' in o)) {
          wrong.push(`${requestId}: retry got ${o.error}`);
        } else if (o.status === 200) {
          const payment = o.body.payment as { paymentId?: string } | undefined;
          if (payment?.paymentId !== row?.id)
            wrong.push(`${requestId}: 200 names ${payment?.paymentId}, row ${row?.id}`);
          if (row?.status !== 'Settled') wrong.push(`${requestId}: answered 200, payment ${row?.status}`);
          if (!settledNonces.has(row?.authNonce?.toLowerCase() ?? '')) wrong.push(`${requestId}: 200 never settled`);
        } else if (o.status !== 409 || o.body.code !== 'BCK.ROUTER.0002' || o.body.paymentId !== row?.id) {
          wrong.push(`${requestId}: retry ${o.status} ${JSON.stringify(o.body)}, payment ${row?.id}`);
        }
      }
      t.deepEqual(wrong, []);
      const conflicts = [...retried.values()].filter((o) => 'status' in o && o.status === 409).length;
      t.true(conflicts >= victim.n, `the held calls were paid already: their retries name the payment (${conflicts})`);

      // One worker was lost, the one killed; SIGTERM still stops the whole tree with exit 0.
      t.is(workerExits(proxy.stderr()).length, 1, proxy.stderr());
      const replaced = childrenOf(supervisor);
      proxy.child.kill('SIGTERM');
      t.deepEqual(await within('the proxy stopping', proxy.exited, 120_000), { code: 0, signal: null });
      for (const w of replaced) t.false(alive(w), `worker ${w} is gone`);
    });
  },
  PAID_ENV,
  // One relay for both databases.
  { serial: true },
);
