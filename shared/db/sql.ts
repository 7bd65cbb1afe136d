// Hand-written SQL for the money hot paths (router issuance, reserves, ledger movements): one short transaction
// per operation over cached prepared statements, no query building. MikroORM keeps everything else.
//
// Why not MikroORM's `execute`: it inlines every parameter into the SQL text (formatQuery), so each statement is
// new text that better-sqlite3 prepares again and PostgreSQL parses and plans again. Here the text is fixed and
// the values are bound: SQLite keeps one prepared statement per text, PostgreSQL one named statement per text
// and connection.
import { type SqlEntityManager, SqlitePlatform } from '@mikro-orm/sql';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import { observeGroupCommit, timedTransaction } from '../metrics/database.js';
import { keyedSerializer } from '../serial.js';

/** The two databases the service runs on. */
export type Dialect = 'sqlite' | 'postgresql';
/** An entity manager of either database (both drivers are MikroORM's SQL drivers). */
export type Em = SqlEntityManager;

export type SqlValue = string | number | bigint | Date | null;
export type SqlRow = Record<string, unknown>;

/** A transaction (or MikroORM's, through `emSql`): statements are written with `?` placeholders. */
export interface SqlTx {
  readonly dialect: Dialect;
  /** Runs a write; resolves with the number of affected rows. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** Runs a read. 64-bit integers arrive as bigint (SQLite) or string (PostgreSQL): read them with `int64()`. */
  all(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
}

export interface SqlRunner {
  readonly dialect: Dialect;
  /**
   * Runs `work` in one transaction (SQLite: BEGIN IMMEDIATE) and commits, or rolls back if it throws.
   * `work` must only run statements on `tx`: no other I/O, and no nested `transaction()` (it would wait for
   * the lock the caller holds). Transactions given the same `serializeOn` key (e.g. the delegation they
   * charge) run one after another in this process (see postgresRunner).
   */
  transaction<T>(work: (tx: SqlTx) => Promise<T>, opts?: { serializeOn?: string }): Promise<T>;
}

/** A 64-bit column value read by `SqlTx.all`. */
export function int64(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v))) return BigInt(v);
  throw new TypeError(`not a 64-bit integer: ${typeof v}`);
}

/** A timestamp column read by `SqlTx.all`: epoch milliseconds on SQLite, a Date or its text on PostgreSQL. */
export function timestamp(v: unknown): Date {
  if (v instanceof Date) return v;
  if (typeof v === 'string' && !/^[0-9]+$/.test(v)) return new Date(v);
  return new Date(Number(int64(v)));
}

/** A unique-key violation from either driver (SQLite SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY, PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return true;
  // MikroORM wraps driver errors; the driver's error is its `cause`.
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isUniqueViolation(cause);
}

/** MikroORM stores dates on SQLite as epoch milliseconds (SqlitePlatform.processDateProperty). */
function sqliteValue(v: SqlValue): string | number | bigint | null {
  return v instanceof Date ? v.getTime() : v;
}

/** `?` placeholders to PostgreSQL's `$1..$n` (the statements here hold no `?` inside string literals). */
function toDollars(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

/** The part of better-sqlite3's API used here (the package ships no types). */
interface NativeStatement {
  readonly reader: boolean;
  run(...params: unknown[]): { changes: number };
  all(...params: unknown[]): SqlRow[];
  safeIntegers(on: boolean): NativeStatement;
}
export interface NativeSqlite {
  prepare(sql: string): NativeStatement;
  readonly inTransaction: boolean;
}

/** The single better-sqlite3 connection MikroORM uses, and kysely's lock on it. */
export interface SqliteHandle {
  readonly native: NativeSqlite;
  /** Runs `fn` while holding the connection (kysely's mutex), so no MikroORM transaction is open meanwhile. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
}

interface Queued {
  readonly work: (tx: SqlTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

/** Most transactions one group commit holds (bounds how long the write lock is held). */
const MAX_GROUP = 256;

/**
 * SQLite with group commit. The transactions requested during one turn of the event loop run in ONE SQLite
 * transaction, each inside its own SAVEPOINT, so each one still commits or rolls back on its own; nobody is
 * answered before the COMMIT that makes their writes durable. On SQLite the COMMIT (writing every page the
 * transaction touched to the WAL) is the largest part of a small transaction, and concurrent payments touch the
 * same pages (the delegation row, the buyer's balance, index leaves), so sharing it is most of the saving.
 * If the transaction as a whole is lost (an I/O error makes SQLite roll back everything), every member fails.
 */
export function sqliteRunner(handle: SqliteHandle): SqlRunner {
  const statements = new Map<string, NativeStatement>();
  const prepare = (sql: string): NativeStatement => {
    let s = statements.get(sql);
    if (s === undefined) {
      s = handle.native.prepare(sql);
      if (s.reader) s.safeIntegers(true);
      statements.set(sql, s);
    }
    return s;
  };
  const tx: SqlTx = {
    dialect: 'sqlite',
    run: (sql, params = []) => Promise.resolve(prepare(sql).run(...params.map(sqliteValue)).changes),
    all: (sql, params = []) => Promise.resolve(prepare(sql).all(...params.map(sqliteValue))),
  };
  const queue: Queued[] = [];
  let scheduled = false;

  const runGroup = async (group: readonly Queued[]): Promise<void> => {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    let lost: unknown;
    observeGroupCommit(group.length);
    await handle.exclusive(async () => {
      prepare('BEGIN IMMEDIATE').run();
      try {
        for (const item of group) {
          prepare('SAVEPOINT member').run();
          try {
            outcomes.push({ ok: true, value: await item.work(tx) });
            prepare('RELEASE member').run();
          } catch (error) {
            if (!handle.native.inTransaction) throw error;
            prepare('ROLLBACK TO member').run();
            prepare('RELEASE member').run();
            outcomes.push({ ok: false, error });
          }
        }
        prepare('COMMIT').run();
      } catch (error) {
        lost = error;
        if (handle.native.inTransaction) prepare('ROLLBACK').run();
      }
    });
    group.forEach((item, i) => {
      const o = outcomes[i];
      if (lost !== undefined) item.reject(o !== undefined && !o.ok ? o.error : lost);
      else if (o === undefined) item.reject(new Error('transaction not run'));
      else if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });
  };

  const flush = (): void => {
    scheduled = false;
    const group = queue.splice(0, MAX_GROUP);
    if (queue.length > 0) schedule();
    runGroup(group).catch((error: unknown) => {
      for (const item of group) item.reject(error);
    });
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  return {
    dialect: 'sqlite',
    transaction: <T>(work: (tx: SqlTx) => Promise<T>) =>
      timedTransaction(
        'sqlite',
        new Promise<T>((resolve, reject) => {
          queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
          schedule();
        }),
      ),
  };
}

export function postgresRunner(pool: Pool): SqlRunner {
  // One server-side prepared statement per text and connection (pg keeps them per client by name).
  const names = new Map<string, { name: string; text: string }>();
  const named = (sql: string) => {
    let n = names.get(sql);
    if (n === undefined) {
      n = { name: `payroute_${names.size}`, text: toDollars(sql) };
      names.set(sql, n);
    }
    return n;
  };
  const txOf = (client: PoolClient): SqlTx => ({
    dialect: 'postgresql',
    run: async (sql, params = []) => {
      const res = await client.query({ ...named(sql), values: [...params] });
      return res.rowCount ?? 0;
    },
    all: async (sql, params = []) => (await client.query<SqlRow>({ ...named(sql), values: [...params] })).rows,
  });
  const run = async <T>(work: (tx: SqlTx) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    let broken: unknown;
    try {
      await client.query('BEGIN');
      try {
        const result = await work(txOf(client));
        // A transaction in which a statement failed answers COMMIT with ROLLBACK and no error (a `work` that caught
        // a statement's error and went on). Nothing was written: never report that as committed. SQLite's
        // runner would have kept the other statements, so the two backends must not differ silently either.
        const end = await client.query('COMMIT');
        if (end.command !== 'COMMIT')
          throw new Error(`the transaction was rolled back (${end.command}): a statement in it failed`);
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e;
        });
        throw err;
      }
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: the pool discards it.
      client.release(broken instanceof Error ? broken : undefined);
    }
  };
  // Transactions on one hot row (one delegation) serialise on its row lock anyway. Queued here, they wait
  // without holding a pool connection, so a burst on one delegation cannot take every connection and stall
  // other users' payments behind its lock.
  const serial = keyedSerializer();
  return {
    dialect: 'postgresql',
    transaction<T>(work: (tx: SqlTx) => Promise<T>, opts: { serializeOn?: string } = {}): Promise<T> {
      const key = opts.serializeOn;
      return timedTransaction('postgresql', key === undefined ? run(work) : serial(key, () => run(work)));
    },
  };
}

/** Which SQL dialect an entity manager speaks (for callers that were handed only the `em`). */
export function dialectOf(em: Em): Dialect {
  return em.getPlatform() instanceof SqlitePlatform ? 'sqlite' : 'postgresql';
}

/**
 * The same statements on an entity manager: inside `em.transactional()` they run on that transaction's own
 * connection (kysely's, which MikroORM holds for it), elsewhere on the pool. Values are BOUND, never formatted into
 * the text: `em.execute` (Connection.execute -> platform.formatQuery) inlines every parameter, so a NUL in a value
 * reached SQLite inside the SQL text and failed the statement (a 500), and a quote or a `?` in a value depended on
 * MikroORM's escaping. Bound, a value is data whatever it holds (PostgreSQL still refuses NUL in text columns:
 * text.ts keeps it out at the boundary).
 *
 * SQLite reads return 64-bit integers as JavaScript numbers here (kysely prepares without safeIntegers): select
 * them `cast(... as text)`, or read them with `int64()`, which refuses a number past 2^53 rather than round it.
 */
export function emSql(em: Em, dialect: Dialect = dialectOf(em)): SqlTx {
  const compile = (sql: string, params: readonly SqlValue[]): CompiledQuery =>
    dialect === 'sqlite'
      ? CompiledQuery.raw(sql, params.map(sqliteValue))
      : CompiledQuery.raw(toDollars(sql), [...params]);
  const executor = (): Kysely<unknown> =>
    em.getTransactionContext<Transaction<unknown>>() ?? em.getConnection().getClient();
  return {
    dialect,
    run: async (sql, params = []) => {
      const res = await executor().executeQuery(compile(sql, params));
      return Number(res.numAffectedRows ?? 0n);
    },
    all: async (sql, params = []) => (await executor().executeQuery<SqlRow>(compile(sql, params))).rows,
  };
}
