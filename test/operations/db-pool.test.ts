// DATABASE_POOL_MAX bounds the PostgreSQL connections one process opens (README "Running several proxies": the sum
// over processes must stay under max_connections). Twelve slow queries at once through a pool of 3: never more
// than 3 sessions of that pool at any moment, and all twelve answered.
import test from 'ava';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { openDb } from '../../shared/db/orm.js';
import { PG_ADMIN_URL, createTestDatabase, postgresAvailable } from '../support/databases.js';

const available = await postgresAvailable();

(available ? test : test.skip)('a process opens at most DATABASE_POOL_MAX PostgreSQL connections', async (t) => {
  const database = await createTestDatabase('postgresql');
  t.teardown(() => database.drop());
  const config = loadConfig({ DATABASE_URL: database.url, DATABASE_POOL_MAX: '3' });
  t.is(config.DATABASE_POOL_MAX, 3);
  const db = await openDb(config.database, { poolMax: config.DATABASE_POOL_MAX });
  t.teardown(() => db.close());
  const name = new URL(database.url).pathname.slice(1);
  const observer = new pg.Client({ connectionString: PG_ADMIN_URL });
  await observer.connect();
  t.teardown(() => observer.end());

  let most = 0;
  let done = false;
  const watching = (async () => {
    while (!done) {
      const r = await observer.query<{ n: string }>(
        "select count(*) as n from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
        [name],
      );
      most = Math.max(most, Number(r.rows[0]?.n ?? 0));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      db.em().getConnection().execute<{ i: number }[]>(`select pg_sleep(0.2), ${i} as i`),
    ),
  );
  done = true;
  await watching;
  t.is(answers.length, 12);
  t.true(most >= 1, 'the pool was seen at work');
  t.true(most <= 3, `at most 3 connections (saw ${most})`);
});
