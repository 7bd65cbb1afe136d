// One place that opens the database for either process, the CLI and the tests.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import type { Pool } from 'pg';
import { MikroORM as PostgresORM } from '@mikro-orm/postgresql';
import type { AbstractSqlDriver, MikroORM as SqlMikroORM } from '@mikro-orm/sql';
import { MikroORM as SqliteORM } from '@mikro-orm/sqlite';
import type { Config } from '../../config/index.js';
import { entities } from './entities/index.js';
import { BoundedClient } from './pg-client.js';
import { postgresqlMigrations } from './migrations/postgresql/index.js';
import { sqliteMigrations } from './migrations/sqlite/index.js';
import { type Dialect, type Em, type NativeSqlite, type SqlRunner, postgresRunner, sqliteRunner } from './sql.js';

export type { Dialect, Em };
export type Orm = SqlMikroORM<AbstractSqlDriver>;

export interface Db {
  readonly orm: Orm;
  readonly dialect: Dialect;
  /** A fresh entity manager (no shared identity map): use one per operation. */
  em(): Em;
  /** Hand-written SQL in short transactions, for the money hot paths (sql.ts). */
  readonly sql: SqlRunner;
  /**
   * SQLite: copies the WAL into the database file without blocking writers (PASSIVE) and reports the WAL's
   * frames and how many are now in the database file; PostgreSQL: nothing (undefined).
   */
  checkpoint(): Promise<{ walFrames: number; checkpointed: number } | undefined>;
  close(): Promise<void>;
}

export interface OpenDbOptions {
  debug?: boolean;
  /**
   * SQLite: WAL pages after which a committing connection checkpoints itself (SQLite's default is 1000). The
   * proxy raises it so the checkpoint (page copies and an fsync) runs in the admin process's checkpointer
   * (admin/jobs/checkpointer.ts) instead of inside a payment's COMMIT; the raised value still bounds the WAL if no
   * checkpointer runs.
   */
  walAutocheckpointPages?: number | undefined;
  /**
   * SQLite: `full` (the default) syncs the WAL at every COMMIT, so a payment answered is a payment that survives
   * a power loss or an OS crash; `normal` syncs only at checkpoints, and a crash of the machine (not of the
   * process) may lose the last commits (sqlite.org/pragma.html#pragma_synchronous). The group commit (sql.ts)
   * shares one sync among the payments of a group: measured here ~170 µs per COMMIT.
   */
  synchronous?: 'full' | 'normal' | undefined;
  /** PostgreSQL: the most connections this process opens (DATABASE_POOL_MAX). Default 10. */
  poolMax?: number | undefined;
  /**
   * Bounds on every database call (DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_MS). Unset: none, for
   * migrations, which may rewrite a large table.
   */
  timeouts?: DatabaseTimeouts | undefined;
}

export interface DatabaseTimeouts {
  /** Longest a statement may run, and a transaction sit idle between its statements (SQLite: wait for a lock). */
  readonly statementMs: number;
  /** Longest a caller waits to get a PostgreSQL connection (opening one, or one of the pool's to be free). */
  readonly connectMs: number;
}

/**
 * How much longer than the server's own statement_timeout the process waits for an answer before it gives up on the
 * connection: normally the server cancels first and the connection stays usable; only a server (or a network path)
 * that answers nothing at all meets the client's bound, whose connection is then dropped (pg-client.ts).
 */
const CLIENT_MARGIN_MS = 2000;

/** pg Pool options for the timeouts (node-postgres client and pool options). */
function postgresBounds(t: DatabaseTimeouts | undefined) {
  if (t === undefined) return { Client: BoundedClient };
  return {
    Client: BoundedClient,
    // Both opening a connection and waiting for a free one (pg-pool destroys a connection still opening past it).
    connectionTimeoutMillis: t.connectMs,
    // Sent at connection start-up: the server cancels a longer statement (57014), lock waits included.
    statement_timeout: t.statementMs,
    // The server ends a transaction whose client stopped talking mid-way (a hung process, a cut path), so its row
    // locks (a delegation's, a wallet's) do not outlive the client: its caller got 503 long ago. Our transactions
    // run statements back to back, never waiting on anything but the database inside one.
    idle_in_transaction_session_timeout: t.statementMs,
    // The answer that never comes (pg-client.ts drops the connection).
    query_timeout: t.statementMs + CLIENT_MARGIN_MS,
    // A peer that vanished without closing (a host down, a NAT that forgot the flow) is noticed by TCP.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

export async function openDb(database: Config['database'], opts: OpenDbOptions = {}): Promise<Db> {
  const common = {
    entities,
    extensions: [Migrator],
    debug: opts.debug ?? false,
    allowGlobalContext: false,
    // Identity-map-free reads are the norm here; keep MikroORM from discovering anything on disk.
    discovery: { warnWhenNoEntities: true },
  };
  let orm: Orm;
  let sql: SqlRunner;
  let checkpoint: Db['checkpoint'] = async () => undefined;
  if (database.kind === 'sqlite') {
    mkdirSync(dirname(database.path), { recursive: true });
    orm = (await SqliteORM.init({
      ...common,
      dbName: database.path,
      migrations: {
        migrationsList: sqliteMigrations,
        path: 'shared/db/migrations/sqlite',
        emit: 'ts',
        snapshot: false,
        silent: true,
      },
    })) as unknown as Orm;
    // Several processes share one file: WAL lets readers run beside one writer, and the busy timeout makes a
    // writer wait for the lock instead of failing with SQLITE_BUSY.
    const native = (await orm.em.getConnection().getNativeClient()) as NativeSqlite & { pragma(s: string): unknown };
    native.pragma('journal_mode = WAL');
    native.pragma(`busy_timeout = ${Math.trunc(opts.timeouts?.statementMs ?? 10_000)}`);
    native.pragma(`synchronous = ${opts.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    // A 32 MiB page cache (default 2 MiB): index pages of the append-only journals stay in memory instead of
    // being read back from the file on every insert. Bounded, per connection.
    native.pragma('cache_size = -32768');
    // Statement journals in memory: each payment runs in a SAVEPOINT of a group commit (sql.ts), and SQLite keeps
    // the pages a savepoint changed in a statement journal that spills to a temp file (create, unlink, writes)
    // past 64 KiB. In memory it is bounded by one group's changes and dropped at COMMIT; measured on mode A:
    // the issuance's statements went from ~160 to ~75 µs per payment (BENCHMARKS.md, session 5).
    native.pragma('temp_store = MEMORY');
    if (opts.walAutocheckpointPages !== undefined)
      native.pragma(`wal_autocheckpoint = ${Math.trunc(opts.walAutocheckpointPages)}`);
    const kysely = orm.em.getConnection().getClient();
    sql = sqliteRunner({
      native,
      exclusive: (fn) => kysely.connection().execute(() => fn()),
    });
    // On the connection's lock, so never inside one of MikroORM's open transactions.
    checkpoint = () =>
      kysely.connection().execute(async () => {
        const [r] = native.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
        return { walFrames: r?.log ?? 0, checkpointed: r?.checkpointed ?? 0 };
      });
  } else {
    orm = (await PostgresORM.init({
      ...common,
      clientUrl: database.url,
      pool: { min: 0, max: opts.poolMax ?? 10 },
      driverOptions: postgresBounds(opts.timeouts),
      migrations: {
        migrationsList: postgresqlMigrations,
        path: 'shared/db/migrations/postgresql',
        emit: 'ts',
        snapshot: false,
        silent: true,
      },
    })) as unknown as Orm;
    sql = postgresRunner(
      await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient(),
    );
  }
  return {
    orm,
    dialect: database.kind,
    sql,
    checkpoint,
    em: () => orm.em.fork({ clear: true, useContext: false }),
    close: () => orm.close(true),
  };
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(db: Db): Promise<string[]> {
  const applied = await db.orm.migrator.up();
  return applied.map((m) => m.name);
}
