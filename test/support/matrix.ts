// Registers a suite once per database: `forEachDb((kind, getStack) => { test(...) })`. Each database gets its
// own stack (own processes, own database), started before and stopped after that database's tests.
import test from 'ava';
import { DB_KINDS, type DbKind, postgresAvailable } from './databases.js';
import { type Stack, startStack } from './stack.js';

const pgAvailable = await postgresAvailable();

export type Register = typeof test.serial;

/** Whether this machine has the database: SQLite always, PostgreSQL when it answers. */
export const dbAvailable = (kind: DbKind): boolean => kind === 'sqlite' || pgAvailable;

/**
 * How a database's tests are registered: `test` (or `test.serial`) where it is available; a missing local
 * PostgreSQL is a loud, counted skip (CI=true makes it a failure in postgresAvailable).
 */
export function registerOn(kind: DbKind, opts: { serial?: boolean } = {}): Register {
  return (dbAvailable(kind) ? (opts.serial === true ? test.serial : test) : test.skip) as Register;
}

export function forEachDb(
  suite: (ctx: { kind: DbKind; stack: () => Stack; test: Register }) => void,
  env: Record<string, string> = {},
  opts: { serial?: boolean } = {},
): void {
  for (const kind of DB_KINDS) {
    const available = dbAvailable(kind);
    const register = registerOn(kind, opts);
    let stack: Stack | undefined;
    if (available) {
      test.before(async () => {
        stack = await startStack(kind, env);
      });
      test.after.always(async () => {
        await stack?.stop();
      });
    }
    const named = ((title: string, ...rest: unknown[]) =>
      (register as (t: string, ...r: unknown[]) => void)(`[${kind}] ${title}`, ...rest)) as unknown as Register;
    suite({
      kind,
      stack: () => {
        if (stack === undefined) throw new Error('stack not started');
        return stack;
      },
      test: named,
    });
  }
}
