// What enforcing ROUTER_MAX_CONCURRENT_PER_USER through the database would cost each routed call, against the
// per-process limiter the proxy uses (shared/router/concurrency.ts), measured in this one process:
// `npm run bench:slots`. The database variant is the cheapest exact one: a per-user counter taken with one
// conditional UPDATE (`in_flight < limit`, affected rows checked) before the call and given back after it, each in
// its own transaction through the hot path's SQL runner (shared/db/sql.ts), as a routed call would. A crashed
// process's slots would also need leases and a sweep, which this leaves out (it only makes the variant dearer).
// Prints calls/s and CPU µs per call of this process for both, on SQLite and PostgreSQL (the server's own CPU is
// not counted), 16 in flight, BENCH_SECONDS (default 10) per side.
import { createConcurrencyLimiter } from '../shared/router/concurrency.js';
import { openDb } from '../shared/db/orm.js';
import { DB_KINDS, type DbKind, createTestDatabase } from '../test/support/databases.js';
import { closedLoop } from './load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? '10');
const IN_FLIGHT = 16;
const LIMIT = 1000;

interface Figure {
  readonly perSecond: number;
  readonly cpuMicrosPerCall: number;
}

async function measure(once: () => Promise<void>): Promise<Figure> {
  let calls = 0;
  let failure: string | undefined;
  const cpu = process.cpuUsage();
  const seconds = await closedLoop(SECONDS, IN_FLIGHT, once, {
    ok: () => {
      calls += 1;
    },
    fail: (error) => {
      failure ??= error;
    },
  });
  const used = process.cpuUsage(cpu);
  if (failure !== undefined) throw new Error(failure);
  return { perSecond: calls / seconds, cpuMicrosPerCall: (used.user + used.system) / calls };
}

async function onDatabase(kind: DbKind): Promise<{ kind: DbKind; memory: Figure; database: Figure }> {
  const test = await createTestDatabase(kind);
  const db = await openDb(test.database);
  try {
    await db.sql.transaction(async (tx) => {
      await tx.run('create table bench_user_slot (user_id varchar(64) primary key, in_flight integer not null)');
      await tx.run("insert into bench_user_slot (user_id, in_flight) values ('u1', 0)");
    });
    const limiter = createConcurrencyLimiter(LIMIT);
    const memory = await measure(async () => {
      const release = limiter.acquire('u1');
      if (release === undefined) throw new Error('limit reached');
      await Promise.resolve();
      release();
    });
    const database = await measure(async () => {
      const taken = await db.sql.transaction((tx) =>
        tx.run('update bench_user_slot set in_flight = in_flight + 1 where user_id = ? and in_flight < ?', [
          'u1',
          LIMIT,
        ]),
      );
      if (taken !== 1) throw new Error('limit reached');
      await db.sql.transaction((tx) =>
        tx.run('update bench_user_slot set in_flight = in_flight - 1 where user_id = ?', ['u1']),
      );
    });
    return { kind, memory, database };
  } finally {
    await db.close();
    await test.drop();
  }
}

for (const kind of DB_KINDS) {
  const r = await onDatabase(kind);
  process.stdout.write(
    `${kind}: in-process limiter ${r.memory.perSecond.toFixed(0)} calls/s, ${r.memory.cpuMicrosPerCall.toFixed(1)} µs CPU per call; ` +
      `database counter ${r.database.perSecond.toFixed(0)} calls/s, ${r.database.cpuMicrosPerCall.toFixed(1)} µs CPU per call ` +
      `(+${(r.database.cpuMicrosPerCall - r.memory.cpuMicrosPerCall).toFixed(0)} µs)\n`,
  );
}
