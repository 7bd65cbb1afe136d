// What every service needs, built once per process (admin, proxy, CLI, tests).
import type { Config } from '../config/index.js';
import {
  type SecretBox,
  type SecretsKeySource,
  generatedKeyPath,
  resolveSecretsKey,
  secretBox,
} from './crypto/secrets.js';
import { type Db, migrate, openDb } from './db/orm.js';
import type { Logger } from './log.js';
import { SecretsKeyMismatch, verifySecretsKey } from './secrets/key-check.js';

export interface ServiceContext {
  readonly config: Config;
  readonly db: Db;
  readonly box: SecretBox;
  readonly log: Logger;
  now(): Date;
}

export interface ContextOptions {
  migrate?: boolean;
  walAutocheckpointPages?: number;
  /**
   * Whether the key must be the data's (shared/secrets/key-check.ts). Default true; only `secrets rotate`, which
   * runs with the new key over data still sealed with the old one, checks for itself.
   */
  verifySecretsKey?: boolean;
}

/** Where the key comes from: SECRETS_KEY, or (unset) the generated file in DATA_DIR. */
export const keySourceOf = (config: Pick<Config, 'SECRETS_KEY' | 'dataDir'>): SecretsKeySource =>
  config.SECRETS_KEY !== undefined ? { kind: 'env' } : { kind: 'file', path: generatedKeyPath(config.dataDir) };

/** Throws SecretsKeyMismatch (after closing the database) when the key does not open the data. */
export async function createContext(config: Config, log: Logger, opts: ContextOptions = {}): Promise<ServiceContext> {
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
  const box = secretBox(key);
  try {
    if (opts.verifySecretsKey !== false) {
      const source = keySourceOf(config);
      const outcome = await verifySecretsKey(
        db,
        { box, source, dataDir: config.dataDir, database: config.database },
        new Date(),
      );
      if (outcome === 'recorded') log.info({ key: source.kind }, 'recorded the check value of the secrets key');
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  return { config, db, box, log, now: () => new Date() };
}

/**
 * For process entry points (both servers, `npm start`, a proxy supervisor): a key that does not open the data is
 * printed, like a configuration error, and the process exits 2 before it listens.
 */
export async function createContextOrExit(
  config: Config,
  log: Logger,
  opts: ContextOptions = {},
): Promise<ServiceContext> {
  try {
    return await createContext(config, log, opts);
  } catch (err) {
    if (!(err instanceof SecretsKeyMismatch)) throw err;
    // stderr whatever LOG_FILE and LOG_LEVEL say (a person starting the process must see why it stopped); the log
    // file gets it too, flushed before the exit.
    process.stderr.write(`cannot start: ${err.message}\n`);
    if (config.LOG_FILE !== undefined) {
      log.fatal({ code: 'secrets_key_mismatch' }, err.message);
      await new Promise<void>((resolve) => log.flush(() => resolve()));
    }
    process.exit(2);
  }
}
