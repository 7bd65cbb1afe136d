// One place that opens the database for either process, the CLI and the tests.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM as PostgresORM } from '@mikro-orm/postgresql';
import type { AbstractSqlDriver, SqlEntityManager, MikroORM as SqlMikroORM } from '@mikro-orm/sql';
import { MikroORM as SqliteORM } from '@mikro-orm/sqlite';
import type { Config } from '../../config/index.js';
import { entities } from './entities/index.js';
import { postgresqlMigrations } from './migrations/postgresql/index.js';
import { sqliteMigrations } from './migrations/sqlite/index.js';

export type Dialect = 'sqlite' | 'postgresql';
export type Orm = SqlMikroORM<AbstractSqlDriver>;
export type Em = SqlEntityManager;

export interface Db {
  readonly orm: Orm;
  readonly dialect: Dialect;
  /** A fresh entity manager (no shared identity map): use one per operation. */
  em(): Em;
  close(): Promise<void>;
}

export async function openDb(database: Config['database'], opts: { debug?: boolean } = {}): Promise<Db> {
  const common = {
    entities,
    extensions: [Migrator],
    debug: opts.debug ?? false,
    allowGlobalContext: false,
    // Identity-map-free reads are the norm here; keep MikroORM from discovering anything on disk.
    discovery: { warnWhenNoEntities: true },
  };
  let orm: Orm;
  if (database.kind === 'sqlite') {
    mkdirSync(dirname(database.path), { recursive: true });
    orm = (await SqliteORM.init({
      ...common,
      dbName: database.path,
      migrations: { migrationsList: sqliteMigrations, path: 'shared/db/migrations/sqlite', emit: 'ts', snapshot: false, silent: true },
    })) as unknown as Orm;
    // Several processes share one file: WAL lets readers run beside one writer, and the busy timeout makes a
    // writer wait for the lock instead of failing with SQLITE_BUSY (STACK.md "MikroORM 7").
    const native = (await orm.em.getConnection().getNativeClient()) as {
      pragma(s: string): unknown;
    };
    native.pragma('journal_mode = WAL');
    native.pragma('busy_timeout = 10000');
    native.pragma('synchronous = NORMAL');
  } else {
    orm = (await PostgresORM.init({
      ...common,
      clientUrl: database.url,
      pool: { min: 0, max: 10 },
      migrations: {
        migrationsList: postgresqlMigrations,
        path: 'shared/db/migrations/postgresql',
        emit: 'ts',
        snapshot: false,
        silent: true,
      },
    })) as unknown as Orm;
  }
  return {
    orm,
    dialect: database.kind,
    em: () => orm.em.fork({ clear: true, useContext: false }),
    close: () => orm.close(true),
  };
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(db: Db): Promise<string[]> {
  const applied = await db.orm.migrator.up();
  return applied.map((m) => m.name);
}
