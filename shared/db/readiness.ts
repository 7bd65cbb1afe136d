// Whether this process's database can take traffic: it answers, and every migration this code knows is applied.
// A process that starts before `db:migrate` ran (the proxy never migrates) must not be sent calls that would fail
// on a missing column; nor must an old process still running after a newer release migrated further (its code
// knows fewer migrations than are applied: that is fine, the migrations are additive until a release says so).
import type { Db } from './orm.js';
import { postgresqlMigrations } from './migrations/postgresql/index.js';
import { sqliteMigrations } from './migrations/sqlite/index.js';

/** MikroORM's default migrations table (the Migrator is configured without a tableName in orm.ts). */
const MIGRATIONS_TABLE = 'mikro_orm_migrations';

export type DatabaseState =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'unreachable' | 'timeout' }
  | { readonly ok: false; readonly reason: 'migrations_pending'; readonly pending: readonly string[] };

/** The names of the migrations this code ships for the database's dialect, in order. */
export function knownMigrations(db: Pick<Db, 'dialect'>): string[] {
  return (db.dialect === 'sqlite' ? sqliteMigrations : postgresqlMigrations).map((m) => m.name);
}

/**
 * Reads the applied migrations (a plain read, never the Migrator: it would create its table when missing, a write
 * the proxy must not make) within `timeoutMs`, so a hung database answers "not ready" instead of a hung probe.
 */
export async function databaseState(db: Db, timeoutMs: number): Promise<DatabaseState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    timer.unref();
  });
  const read = db
    .em()
    .getConnection()
    .execute<{ name: string }[]>(`select name from ${MIGRATIONS_TABLE}`)
    .then(
      (rows) => ({ rows }),
      (err: unknown) => ({ err }),
    );
  const result = await Promise.race([read, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') return { ok: false, reason: 'timeout' };
  if ('err' in result) {
    // The table is missing until the first migration ran: that is "pending", not "unreachable".
    const message = result.err instanceof Error ? result.err.message : String(result.err);
    const tableMissing = /no such table|does not exist/i.test(message);
    if (!tableMissing) return { ok: false, reason: 'unreachable' };
    return { ok: false, reason: 'migrations_pending', pending: knownMigrations(db) };
  }
  const applied = new Set(result.rows.map((r) => r.name.replace(/\.[jt]s$/, '')));
  const pending = knownMigrations(db).filter((name) => !applied.has(name));
  return pending.length === 0 ? { ok: true } : { ok: false, reason: 'migrations_pending', pending };
}
