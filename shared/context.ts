// What every service needs, built once per process (admin, proxy, CLI, tests).
import type { Config } from '../config/index.js';
import { type SecretBox, resolveSecretsKey, secretBox } from './crypto/secrets.js';
import { type Db, migrate, openDb } from './db/orm.js';
import type { Logger } from './log.js';

export interface ServiceContext {
  readonly config: Config;
  readonly db: Db;
  readonly box: SecretBox;
  readonly log: Logger;
  now(): Date;
}

export async function createContext(
  config: Config,
  log: Logger,
  opts: { migrate?: boolean; walAutocheckpointPages?: number } = {},
): Promise<ServiceContext> {
  const { key, generated } = resolveSecretsKey(config.SECRETS_KEY, config.dataDir);
  if (generated) {
    log.warn(
      { dataDir: config.dataDir },
      'SECRETS_KEY is not set: using the generated key in DATA_DIR/secrets.key (sandbox only)',
    );
  }
  if (opts.migrate === true) {
    // On a connection of its own without the statement bound: a migration may rewrite a large table.
    const unbounded = await openDb(config.database, { synchronous: config.SQLITE_SYNCHRONOUS, poolMax: 1 });
    try {
      const applied = await migrate(unbounded);
      if (applied.length > 0) log.info({ applied }, 'migrations applied');
    } finally {
      await unbounded.close();
    }
  }
  const db = await openDb(config.database, {
    walAutocheckpointPages: opts.walAutocheckpointPages,
    synchronous: config.SQLITE_SYNCHRONOUS,
    poolMax: config.DATABASE_POOL_MAX,
    timeouts: { statementMs: config.DATABASE_STATEMENT_TIMEOUT_MS, connectMs: config.DATABASE_CONNECT_TIMEOUT_MS },
  });
  return { config, db, box: secretBox(key), log, now: () => new Date() };
}
