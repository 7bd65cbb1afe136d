// The database failing under the service, made by the test (never by stopping the machine's server): PostgreSQL
// behind a TCP forwarder that can swallow every byte (a database that accepts connections and never answers) or cut
// every connection, PostgreSQL's own connection limit reached, and on SQLite another process holding the write lock.
// What must hold: every request is answered within its bounds (503 BCK.DATABASE.0001 with Retry-After, never a 500
// and never a hang), the per-user router slots come back whatever happened to the calls, the service recovers by
// itself within seconds of the database answering again, and no payment is half-written.
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { openDb } from '../../shared/db/orm.js';
import type { NativeSqlite } from '../../shared/db/sql.js';
import { type ApiClient, type ApiResponse as Answer, apiClient } from '../support/http.js';

// Answers of any shape: the tests read their envelope's fields.
type ApiResponse = Answer<any>;
import { PG_ADMIN_URL, postgresAvailable } from '../support/databases.js';
import { assertPaymentsConsistent } from '../support/money-invariants.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import { PAID_ENV, type User, createDelegation, fund } from '../support/router-fixtures.js';
import { type Stack, startStack } from '../support/stack.js';
import { type TcpFault, tcpFault } from '../support/tcp-fault.js';

const PRICE = 10_000n;
/** Short bounds, so a fault is answered in seconds; the defaults are 10 s and 5 s. */
const BOUNDS = { DATABASE_STATEMENT_TIMEOUT_MS: '1500', DATABASE_CONNECT_TIMEOUT_MS: '1000' };
/** The per-user limit the red team's calls ran into (the default): 10 calls in flight per user and process. */
const SLOTS = 10;
const ENV = { ...PAID_ENV, ...BOUNDS, ROUTER_MAX_CONCURRENT_PER_USER: String(SLOTS) };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pgUp = await postgresAvailable();

const m = merchantsOfFile(PRICE);

/** A user with money and a delegation whose cap fits every payment of the test. */
async function payer(s: Stack): Promise<{ u: User; delegationId: string }> {
  const u = await s.user();
  await fund(s, m.chain, u, 1_000_000_000n);
  return { u, delegationId: await createDelegation(u, 1_000_000) };
}

const route = (api: ApiClient, delegationId: string, requestId: string) =>
  api.post('/router/route', { requestId, delegationId, url: `${m.v2.url}${m.v2.paidPath}` });

/** A refusal because of the database: 503 BCK.DATABASE.0001, retryable, with Retry-After. */
function isDatabaseRefusal(r: ApiResponse): boolean {
  return (
    r.status === 503 &&
    r.body?.code === 'BCK.DATABASE.0001' &&
    r.body?.retryable === true &&
    Number(r.headers.get('retry-after')) > 0
  );
}

/** Retries a paid call until the database answers it: 200, or 409 naming a payment an earlier attempt made. */
async function settleCall(api: ApiClient, delegationId: string, requestId: string): Promise<ApiResponse> {
  for (let i = 0; i < 120; i += 1) {
    const r = await route(api, delegationId, requestId);
    if (!isDatabaseRefusal(r)) return r;
    await sleep(500);
  }
  throw new Error(`${requestId}: still refused after a minute`);
}

/** Polls until a fresh paid call succeeds; returns how long that took (reported, never asserted). */
async function recovery(api: ApiClient, delegationId: string, tag: string): Promise<number> {
  const started = Date.now();
  for (let i = 0; i < 240; i += 1) {
    const r = await route(api, delegationId, `${tag}-recover-${i}`);
    if (r.status === 200) return Date.now() - started;
    if (!isDatabaseRefusal(r)) throw new Error(`recovering: ${r.status} ${r.text}`);
    await sleep(250);
  }
  throw new Error('the service did not recover within a minute of the database answering again');
}

/** Every call of a burst is answered; the statuses, counted. */
function tally(answers: readonly ApiResponse[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of answers) {
    const key = `${r.status} ${typeof r.body === 'object' ? (r.body?.code ?? '') : ''}`.trim();
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * Recovered for good: the user's slots all came back and no connection the fault broke is handed out again, so
 * SLOTS paid calls at once all pass at the first try (none is 429 BCK.ROUTER.0007, none meets a dead connection).
 */
async function slotsAreFree(t: ExecutionContext, api: ApiClient, delegationId: string, tag: string): Promise<void> {
  const burst = await Promise.all(
    Array.from({ length: SLOTS }, (_, i) => route(api, delegationId, `${tag}-after-${i}`)),
  );
  t.deepEqual(tally(burst), { '200': SLOTS }, 'every slot is free again');
}

// --- PostgreSQL behind a forwarder the test breaks ---------------------------------------------------------------

const pgTest = pgUp ? test.serial : test.skip;
let fault: TcpFault | undefined;
let pgStack: Stack | undefined;
const viaFault = (url: string): string => {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(fault?.port ?? 0);
  return u.toString();
};
if (pgUp) {
  test.before(async () => {
    fault = await tcpFault({ host: '127.0.0.1', port: Number(new URL(PG_ADMIN_URL).port || 5432) });
    pgStack = await startStack('postgresql', ENV, { processDatabaseUrl: viaFault });
  });
  test.after.always(async () => {
    fault?.mode('pass');
    await pgStack?.stop();
    await fault?.close();
  });
}
const pgs = (): { s: Stack; f: TcpFault } => {
  if (pgStack === undefined || fault === undefined) throw new Error('stack not started');
  return { s: pgStack, f: fault };
};

pgTest(
  '[postgresql] a database that answers nothing: every call is 503 with Retry-After, slots come back, it recovers by itself',
  async (t) => {
    const { s, f } = pgs();
    const { u, delegationId } = await payer(s);
    t.is((await route(u.api, delegationId, 'bh-warm')).status, 200);

    f.mode('blackhole');
    // The red team's calls: SLOTS paid calls of one user and a read forwarded to the admin, all at once.
    const admin = apiClient(`${s.proxyUrl}/api/v1`, u.apiKey);
    const answers = await Promise.all([
      ...Array.from({ length: SLOTS }, (_, i) => route(u.api, delegationId, `bh-${i}`)),
      admin.get('/protocol/agents'),
    ]);
    const ready = await fetch(`${s.proxyUrl}/readyz`, { signal: AbortSignal.timeout(60_000) });
    f.mode('pass');
    t.log(tally(answers));
    t.true(
      answers.every(isDatabaseRefusal),
      `every call answered 503 BCK.DATABASE.0001 with Retry-After: ${JSON.stringify(tally(answers))}`,
    );
    t.is(ready.status, 503, '/readyz said not ready while the database answered nothing');

    const ms = await recovery(u.api, delegationId, 'bh');
    t.log(`recovered ${ms} ms after the database answered again`);
    await slotsAreFree(t, u.api, delegationId, 'bh');
    // The refused calls, retried with their requestIds, are paid once each.
    for (let i = 0; i < SLOTS; i += 1) t.is((await settleCall(u.api, delegationId, `bh-${i}`)).status, 200);
    await assertPaymentsConsistent(t, s, u, delegationId);
  },
);

pgTest('[postgresql] a database that is down: 503 with Retry-After on every route, never a 500', async (t) => {
  const { s, f } = pgs();
  const { u, delegationId } = await payer(s);
  t.is((await route(u.api, delegationId, 'cut-warm')).status, 200);
  // Another user whose key is not cached yet: the credential lookup itself meets the outage.
  const other = await s.user();

  f.mode('cut');
  const adminPort = apiClient(`${s.adminUrl}/api/v1`, u.apiKey);
  const answers = await Promise.all([
    ...Array.from({ length: 6 }, (_, i) => route(u.api, delegationId, `cut-${i}`)),
    other.api.get('/protocol/agents'),
    u.api.get('/router/payments'),
    u.api.post('/protocol/agents', {
      name: 'a',
      description: 'd',
      tags: [],
      endpoints: [{ GET: 'https://agent.example/x' }],
      agentDefinitionUrl: 'https://agent.example/def',
    }),
    adminPort.get('/delegation'),
    u.api.post('/router/payments', {
      delegationId,
      protocol: 'x402',
      requestId: 'cut-mint',
      target: { accepts: [] },
    }),
  ]);
  // The consent page looks its client up: a page saying so, 503 with Retry-After, not a JSON envelope.
  const page = await fetch(`${s.proxyUrl}/oauth/authorize?response_type=code&client_id=any&redirect_uri=x`);
  const token = await fetch(`${s.proxyUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=refresh_token&refresh_token=abc&client_id=nobody',
    signal: AbortSignal.timeout(60_000),
  });
  f.mode('pass');
  t.log(tally(answers));
  for (const r of answers) t.not(r.status, 500, r.text);
  // A caller the cache still knows may be refused on the body first (the mint's empty offer list is a 400).
  t.true(
    answers.every((r) => isDatabaseRefusal(r) || r.status === 400),
    JSON.stringify(tally(answers)),
  );
  t.true(answers.filter(isDatabaseRefusal).length >= answers.length - 1);
  // The OAuth token endpoint speaks RFC 6749: its own error name, the same status and Retry-After.
  t.is(token.status, 503);
  t.is(token.headers.get('retry-after'), '2');
  t.like(await token.json(), { error: 'temporarily_unavailable' });
  t.is(page.status, 503);
  t.is(page.headers.get('retry-after'), '2');
  t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
  t.regex(await page.text(), /BCK\.DATABASE\.0001/);

  await recovery(u.api, delegationId, 'cut');
  await slotsAreFree(t, u.api, delegationId, 'cut');
  for (let i = 0; i < 6; i += 1) t.is((await settleCall(u.api, delegationId, `cut-${i}`)).status, 200);
  t.is((await other.api.get('/protocol/agents')).status, 200);
  await assertPaymentsConsistent(t, s, u, delegationId);
});

pgTest(
  '[postgresql] paid load with the database going silent mid-way: each payment committed whole or not at all',
  async (t) => {
    const { s, f } = pgs();
    const { u, delegationId } = await payer(s);
    const CALLS = 40;
    const requestIds = Array.from({ length: CALLS }, (_, i) => `mid-${i}`);
    const first = new Map<string, ApiResponse>();
    let next = 0;
    const caller = async () => {
      for (let i = next++; i < CALLS; i = next++) {
        const id = requestIds[i] ?? '';
        first.set(id, await route(u.api, delegationId, id));
      }
    };
    // The faults land while payments are in their transactions: after a few went through, the database goes silent
    // for a few seconds, answers again, then drops every connection.
    const breaker = (async () => {
      while (first.size < 8) await sleep(20);
      f.mode('blackhole');
      await sleep(5000);
      f.mode('pass');
      while (first.size < 24) await sleep(20);
      f.mode('cut');
      await sleep(500);
      f.mode('pass');
    })();
    await Promise.all([breaker, ...Array.from({ length: 4 }, caller)]);
    const answers = [...first.values()];
    t.log(tally(answers));
    for (const r of answers) t.true(r.status === 200 || isDatabaseRefusal(r), `${r.status} ${r.text}`);
    t.true(answers.some(isDatabaseRefusal), 'the fault met some calls');

    // Every refused call retried with its requestId: paid now, or told of the payment its first attempt made.
    for (const id of requestIds) {
      if (first.get(id)?.status === 200) continue;
      const r = await settleCall(u.api, delegationId, id);
      t.true(r.status === 200 || (r.status === 409 && r.body.code === 'BCK.ROUTER.0002'), `${id}: ${r.text}`);
    }
    const { rows } = await assertPaymentsConsistent(t, s, u, delegationId);
    t.is(rows.filter((r) => r.requestId?.startsWith('mid-')).length, CALLS);
  },
);

pgTest(
  "[postgresql] PostgreSQL's own connection limit reached: the refused calls are 503, nothing is lost",
  async (t) => {
    const { s } = pgs();
    // A role the server limits to 2 connections (a superuser is exempt from connection limits).
    const role = `payroute_lim_${randomBytes(4).toString('hex')}`;
    const dbName = new URL(s.db.url).pathname.slice(1);
    const su = new pg.Client({ connectionString: s.db.url, connectionTimeoutMillis: 10_000 });
    await su.connect();
    try {
      await su.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 2`);
      await su.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`);
      await su.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      await su.query(`GRANT CONNECT ON DATABASE ${dbName} TO ${role}`);
    } finally {
      await su.end();
    }
    const limitedUrl = new URL(s.db.url);
    limitedUrl.username = role;
    const proxy = await s.spawn('proxy', { DATABASE_URL: limitedUrl.toString(), DATABASE_POOL_MAX: '10' });
    try {
      const payers = await Promise.all(Array.from({ length: 5 }, () => payer(s)));
      const calls = payers.flatMap(({ u, delegationId }, p) =>
        Array.from({ length: 6 }, (_, i) => ({
          api: apiClient(`${proxy.url}/api/v1`, u.apiKey),
          delegationId,
          id: `lim-${p}-${i}`,
        })),
      );
      const answers = await Promise.all(calls.map((c) => route(c.api, c.delegationId, c.id)));
      t.log(tally(answers));
      for (const r of answers) t.true(r.status === 200 || isDatabaseRefusal(r), `${r.status} ${r.text}`);
      t.true(answers.some(isDatabaseRefusal), 'the limit refused some calls');
      for (const [i, c] of calls.entries()) {
        if (answers[i]?.status === 200) continue;
        const r = await settleCall(c.api, c.delegationId, c.id);
        t.true(r.status === 200 || (r.status === 409 && r.body.code === 'BCK.ROUTER.0002'), `${c.id}: ${r.text}`);
      }
      for (const { u, delegationId } of payers) {
        const { rows } = await assertPaymentsConsistent(t, s, u, delegationId);
        t.is(rows.length, 6);
      }
    } finally {
      await proxy.stop();
      const su2 = new pg.Client({ connectionString: s.db.url, connectionTimeoutMillis: 10_000 });
      await su2.connect();
      await su2.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await su2.end();
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 10_000 });
      await admin.connect();
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
    }
  },
);

// --- SQLite with another process holding the write lock ----------------------------------------------------------

let sqliteStack: Stack | undefined;
test.before(async () => {
  sqliteStack = await startStack('sqlite', ENV);
});
test.after.always(async () => {
  await sqliteStack?.stop();
});

test.serial(
  '[sqlite] another process holding the write lock: paid calls are 503 with Retry-After, then pay once it lets go',
  async (t) => {
    const s = sqliteStack;
    if (s === undefined || s.db.database.kind !== 'sqlite') throw new Error('stack not started');
    const { u, delegationId } = await payer(s);
    t.is((await route(u.api, delegationId, 'lock-warm')).status, 200);

    // Another process's connection to the file, holding the write lock as a long transaction would.
    const holder = await openDb(s.db.database);
    const native = (await holder.orm.em.getConnection().getNativeClient()) as NativeSqlite;
    native.prepare('BEGIN IMMEDIATE').run();
    let answers: ApiResponse[];
    try {
      answers = await Promise.all(Array.from({ length: SLOTS }, (_, i) => route(u.api, delegationId, `lock-${i}`)));
    } finally {
      native.prepare('ROLLBACK').run();
      await holder.close();
    }
    t.log(tally(answers));
    t.true(answers.every(isDatabaseRefusal), JSON.stringify(tally(answers)));

    await recovery(u.api, delegationId, 'lock');
    await slotsAreFree(t, u.api, delegationId, 'lock');
    for (let i = 0; i < SLOTS; i += 1) t.is((await settleCall(u.api, delegationId, `lock-${i}`)).status, 200);
    await assertPaymentsConsistent(t, s, u, delegationId);
  },
);

pgTest('[postgresql] a pooled connection whose answer never came is dropped, never handed out again', async (t) => {
  const { s, f } = pgs();
  // One connection, so the next statement would get the same one if it were kept.
  const db = await openDb(
    { kind: 'postgresql', url: viaFault(s.db.url) },
    { poolMax: 1, timeouts: { statementMs: 500, connectMs: 1000 } },
  );
  try {
    const read = () => db.em().getConnection().execute<{ n: number }[]>('select 1 as n');
    t.deepEqual(await read(), [{ n: 1 }]);
    f.mode('blackhole');
    // Read through MikroORM (kysely releases a connection to the pool without an error) and through the SQL runner.
    await t.throwsAsync(read(), { message: /Query read timeout/ });
    await t.throwsAsync(db.sql.transaction((tx) => tx.all('select 1 as n')));
    f.mode('pass');
    for (let i = 0; i < 5; i += 1) t.deepEqual(await read(), [{ n: 1 }], `read ${i} after the fault`);
  } finally {
    f.mode('pass');
    await db.close();
  }
});
