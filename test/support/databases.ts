// Every data test runs on SQLite and PostgreSQL. Each test file gets its own database, created
// here and dropped by the returned cleanup, so files run in parallel. In CI (CI=true) PostgreSQL is mandatory;
// locally a missing server is a loud skip.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Config } from '../../config/index.js';

export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type DbKind = 'sqlite' | 'postgresql';
export const DB_KINDS: readonly DbKind[] = ['sqlite', 'postgresql'];

export interface TestDatabase {
  readonly kind: DbKind;
  readonly database: Config['database'];
  /** DATABASE_URL form, for child processes. */
  readonly url: string;
  drop(): Promise<void>;
}

/** Creating or dropping a test database waits on other sessions at worst (DROP ... FORCE ends them): bounded. */
const BOUNDED = { connectionTimeoutMillis: 30_000, query_timeout: 120_000 } as const;

let pgUp: Promise<boolean> | undefined;

export function postgresAvailable(): Promise<boolean> {
  pgUp ??= (async () => {
    // A few tries with a generous bound: on a loaded machine (CI, another file loading the CPU) a connection to a
    // server that is up can take seconds, and a miss skips (or, in CI, fails) every PostgreSQL test of the file.
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const c = new pg.Client({
        connectionString: PG_ADMIN_URL,
        connectionTimeoutMillis: 10_000,
        query_timeout: 30_000,
      });
      try {
        await c.connect();
        await c.end();
        return true;
      } catch {
        await c.end().catch(() => undefined);
      }
    }
    if (process.env.CI === 'true') throw new Error(`PostgreSQL is required in CI and not reachable at ${PG_ADMIN_URL}`);
    process.stderr.write(`\n!!! PostgreSQL not reachable at ${PG_ADMIN_URL}: PostgreSQL tests are SKIPPED !!!\n\n`);
    return false;
  })();
  return pgUp;
}

export async function createTestDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'payroute-test-'));
    const path = join(dir, 'payroute.sqlite');
    return {
      kind,
      database: { kind: 'sqlite', path },
      url: `sqlite:${path}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `payroute_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, ...BOUNDED });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    kind,
    database: { kind: 'postgresql', url: url.toString() },
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL, ...BOUNDED });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
