// Readiness and the graceful stop of the proxy (README "Operating"): /readyz answers 200 only while the process
// serves with its database migrated; SIGTERM turns it 503, refuses new connections, lets a paid call that is being
// relayed finish and be recorded, then exits 0. On SQLite and PostgreSQL.
import { Agent, request } from 'node:http';
import test from 'ava';
import { forEachDb } from '../support/matrix.js';
import { startStack } from '../support/stack.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  createDelegation,
  fund,
  paymentRow,
  relayMerchant,
  startMerchants,
} from '../support/router-fixtures.js';

let m: Merchants;
/** The v2 merchant behind a relay that holds every paid request until the test lets it through. */
let gated: ScriptedMerchant;
let arrived: () => void = () => {};
let release: () => void = () => {};

test.serial.before(async () => {
  m = await startMerchants(10_000n);
  gated = await relayMerchant(m.v2.url, async (req) => {
    if (req.headers['payment-signature'] !== undefined) {
      await new Promise<void>((resolve) => {
        release = resolve;
        arrived();
      });
    }
  });
});

test.after.always(async () => {
  await gated?.close();
  await m?.close();
});

/** GET on a given agent (its kept-alive connection), as a balancer's pooled probe would. */
function get(url: string, agent: Agent): Promise<{ status: number; body: unknown; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), connection: res.headers.connection }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

forEachDb(
  ({ stack, test }) => {
    test('/readyz and /healthz of both processes answer 200 when serving', async (t) => {
      const s = stack();
      for (const [url, service] of [
        [s.proxyUrl, 'proxy'],
        [s.adminUrl, 'admin'],
      ] as const) {
        const ready = await fetch(`${url}/readyz`);
        t.is(ready.status, 200);
        t.deepEqual(await ready.json(), { status: 'ready', service });
        const live = await fetch(`${url}/healthz`);
        t.is(live.status, 200);
      }
      // The public front door serves the proxy's own probe, never the admin's.
      t.deepEqual(await (await fetch(`${s.baseUrl.replace('/api/v1', '')}/readyz`)).json(), {
        status: 'ready',
        service: 'proxy',
      });
    });

    test('SIGTERM: new connections refused, the paid call in flight finishes and is recorded, /readyz 503 on an open connection, exit 0', async (t) => {
      const s = stack();
      const proxy = await s.spawn('proxy', { SHUTDOWN_GRACE_MS: '60000' });
      const u = await s.user();
      await fund(s, m.chain, u, 100_000_000n);
      const delegationId = await createDelegation(u, 1000);

      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      t.teardown(() => agent.destroy());
      t.is((await get(`${proxy.url}/readyz`, agent)).status, 200);

      const inside = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const paid = fetch(`${proxy.url}/api/v1/router/route`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ requestId: 'drain-1', delegationId, url: `${gated.url}/paid` }),
      });
      await inside; // the paid request is at the merchant: the proxy has a call in flight
      proxy.child.kill('SIGTERM');

      // New connections are refused once the listening socket closed.
      let refused = 'answered';
      for (let i = 0; refused !== 'ECONNREFUSED' && i < 600; i += 1) {
        refused = await fetch(`${proxy.url}/healthz`).then(
          () => 'answered',
          (err: unknown) => String((err as { cause?: { code?: string } }).cause?.code),
        );
        if (refused !== 'ECONNREFUSED') await new Promise((r) => setTimeout(r, 50));
      }
      t.is(refused, 'ECONNREFUSED');
      t.is(proxy.child.exitCode, null, 'still running while the call is in flight');

      // The probe's kept-alive connection still reaches the draining process: not ready, and asked to close.
      const probe = await get(`${proxy.url}/readyz`, agent);
      t.is(probe.status, 503);
      t.deepEqual(probe.body, { status: 'draining', service: 'proxy' });
      t.is(probe.connection, 'close');

      release();
      const r = await paid;
      t.is(r.status, 200);
      const answer = (await r.json()) as { paid: boolean; payment: { paymentId: string; status: string } };
      t.true(answer.paid);
      t.is(answer.payment.status, 'Settled');
      t.is((await paymentRow(s, answer.payment.paymentId))?.status, 'Settled');
      t.deepEqual(await proxy.exited, { code: 0, signal: null });
    });
  },
  PAID_ENV,
  // One gated merchant for both databases' stop tests.
  { serial: true },
);

test('/readyz of a proxy whose database is not migrated is 503 migrations_pending until it is', async (t) => {
  const s = await startStack('sqlite', PAID_ENV);
  t.teardown(() => s.stop());
  // A second database the proxy opens before anything migrated it.
  const { createTestDatabase } = await import('../support/databases.js');
  const fresh = await createTestDatabase('sqlite');
  t.teardown(() => fresh.drop());
  const proxy = await s.spawn('proxy', { DATABASE_URL: fresh.url });
  const before = await fetch(`${proxy.url}/readyz`);
  t.is(before.status, 503);
  const body = (await before.json()) as { status: string; pendingMigrations: string[] };
  t.is(body.status, 'migrations_pending');
  t.true(body.pendingMigrations.length > 0);
  t.is((await fetch(`${proxy.url}/healthz`)).status, 200, 'alive all the same');
  const { loadConfig } = await import('../../config/index.js');
  const { openDb, migrate } = await import('../../shared/db/orm.js');
  const db = await openDb(loadConfig({ DATABASE_URL: fresh.url }).database);
  await migrate(db);
  await db.close();
  const after = await fetch(`${proxy.url}/readyz`);
  t.is(after.status, 200);
});
