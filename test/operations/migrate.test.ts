// `npm run db:migrate [-- up | status | down --yes]` on SQLite and PostgreSQL: real processes of the entry point
// (admin/cli/migrate.ts) against a database of their own, plus every migration's down() run in turn in-process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { revertLast } from '../../admin/cli/migrations.js';
import { postgresqlMigrations } from '../../shared/db/migrations/postgresql/index.js';
import { sqliteMigrations } from '../../shared/db/migrations/sqlite/index.js';
import { type Db, migrate, openDb } from '../../shared/db/orm.js';
import { runEntry } from '../support/cli.js';
import { DB_KINDS, type DbKind, type TestDatabase, createTestDatabase } from '../support/databases.js';
import { registerOn } from '../support/matrix.js';

const NAMES: Record<DbKind, string[]> = {
  sqlite: sqliteMigrations.map((m) => m.name ?? ''),
  postgresql: postgresqlMigrations.map((m) => m.name ?? ''),
};

interface Run {
  code: number | null;
  json: Record<string, any>;
  stdout: string;
  stderr: string;
}

async function withDatabase(
  kind: DbKind,
  fn: (db: TestDatabase, cli: (args: string[]) => Promise<Run>) => Promise<void>,
) {
  const db = await createTestDatabase(kind);
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-migrate-'));
  const env = { DATABASE_URL: db.url, DATA_DIR: dataDir, ENVIRONMENT: 'sandbox', LOG_LEVEL: 'warn' };
  const cli = async (args: string[]): Promise<Run> => {
    const out = await runEntry('admin/cli/migrate.ts', args, env);
    let json: Record<string, any> = {};
    try {
      json = JSON.parse(out.stdout);
    } catch {
      // asserted by the caller
    }
    return { ...out, json };
  };
  try {
    await fn(db, cli);
  } finally {
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Tables, columns and indexes, as the database describes them. */
async function schemaOf(db: Db): Promise<string[]> {
  const conn = db.orm.em.getConnection();
  const rows: Record<string, unknown>[] =
    db.dialect === 'sqlite'
      ? await conn.execute(`select type, name, sql from sqlite_master where name not like 'sqlite_%' order by name`)
      : await conn.execute(
          `select table_name, column_name, data_type, is_nullable from information_schema.columns
             where table_schema = 'public' order by table_name, column_name`,
        );
  const indexes: Record<string, unknown>[] =
    db.dialect === 'sqlite'
      ? []
      : await conn.execute(`select indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`);
  return [...rows, ...indexes].map((r) => JSON.stringify(r));
}

async function inspect<T>(target: TestDatabase, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDb(target.database);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

for (const kind of DB_KINDS) {
  const register = registerOn(kind);
  const names = NAMES[kind];
  const last = names.at(-1) ?? '';

  register(
    `[${kind}] status on an empty database: every migration pending, none applied, and nothing changes`,
    async (t) => {
      await withDatabase(kind, async (_db, cli) => {
        for (let i = 0; i < 2; i++) {
          const r = await cli(['status']);
          t.is(r.code, 0, r.stderr);
          t.deepEqual(r.json, { database: kind, applied: [], pending: names });
        }
      });
    },
  );

  register(
    `[${kind}] up (the default) applies every migration in order; status then lists each with its time`,
    async (t) => {
      await withDatabase(kind, async (_db, cli) => {
        const before = Date.now();
        const up = await cli([]);
        const after = Date.now();
        t.is(up.code, 0, up.stderr);
        t.deepEqual(up.json, { database: kind, applied: names });
        const again = await cli(['up']);
        t.deepEqual(again.json, { database: kind, applied: [] });
        const status = await cli(['status']);
        t.is(status.code, 0, status.stderr);
        t.deepEqual(Object.keys(status.json), ['database', 'applied', 'pending']);
        t.deepEqual(status.json.pending, []);
        t.deepEqual(
          status.json.applied.map((a: { name: string }) => a.name),
          names,
        );
        // Stored in UTC, read back as UTC (a zone mistake would be hours off); the database keeps whole seconds.
        for (const { executedAt } of status.json.applied as { executedAt: string }[]) {
          t.regex(executedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
          const at = Date.parse(executedAt);
          t.true(at >= before - 1000 && at <= after + 1000, `${executedAt} within the up call`);
        }
      });
    },
  );

  register(
    `[${kind}] down without --yes is refused (exit 1), names the migration it would revert, reverts nothing`,
    async (t) => {
      await withDatabase(kind, async (db, cli) => {
        await cli([]);
        const schema = await inspect(db, schemaOf);
        const r = await cli(['down']);
        t.is(r.code, 1);
        t.deepEqual(r.json, {
          error: 'BCK.HTTP.0400',
          message: `down reverts ${last}, dropping what it added, data included: run it again with --yes to confirm`,
        });
        const status = await cli(['status']);
        t.deepEqual(status.json.pending, []);
        t.deepEqual(await inspect(db, schemaOf), schema);
      });
    },
  );

  register(
    `[${kind}] down --yes reverts the last migration (its schema change goes) and up applies it again`,
    async (t) => {
      await withDatabase(kind, async (db, cli) => {
        await cli([]);
        const applied = await inspect(db, schemaOf);
        const down = await cli(['down', '--yes']);
        t.is(down.code, 0, down.stderr);
        t.deepEqual(down.json, { database: kind, reverted: [last] });
        const status = await cli(['status']);
        t.deepEqual(status.json.pending, [last]);
        t.deepEqual(
          status.json.applied.map((a: { name: string }) => a.name),
          names.slice(0, -1),
        );
        t.notDeepEqual(await inspect(db, schemaOf), applied, 'the schema lost what the migration added');
        const up = await cli(['up']);
        t.deepEqual(up.json, { database: kind, applied: [last] });
        t.deepEqual(await inspect(db, schemaOf), applied, 'and has it back');
      });
    },
  );

  register(`[${kind}] down --yes with no migration applied reverts nothing, exit 0`, async (t) => {
    await withDatabase(kind, async (_db, cli) => {
      const r = await cli(['down', '--yes']);
      t.is(r.code, 0, r.stderr);
      t.deepEqual(r.json, { database: kind, reverted: [] });
    });
  });

  register(
    `[${kind}] every down() reverts in turn, to the migration that cannot be reverted: refused, still applied`,
    async (t) => {
      const irreversible = names.find((n) => n.endsWith('_permission_signature_hash')) ?? '';
      const at = names.indexOf(irreversible);
      t.true(at > 0);
      await withDatabase(kind, async (target, cli) => {
        const reverted: string[] = [];
        const result = await inspect(target, async (db) => {
          await migrate(db);
          for (;;) {
            const r = await revertLast(db);
            if (r.kind !== 'reverted') return r;
            reverted.push(r.name);
          }
        });
        t.deepEqual(reverted, names.slice(at + 1).reverse());
        t.is(result.kind, 'failed');
        if (result.kind === 'failed') t.is(result.name, irreversible);
        // The command line says so, exit 1, and the migration stays applied.
        const r = await cli(['down', '--yes']);
        t.is(r.code, 1);
        t.deepEqual(r.json, {
          error: 'BCK.HTTP.0400',
          message: `${irreversible} was not reverted (This migration cannot be reverted); it is still applied`,
        });
        const status = await cli(['status']);
        t.deepEqual(
          status.json.applied.map((a: { name: string }) => a.name),
          names.slice(0, at + 1),
        );
        t.deepEqual(status.json.pending, names.slice(at + 1));
        const up = await cli([]);
        t.deepEqual(up.json, { database: kind, applied: names.slice(at + 1) });
      });
    },
  );
}

test('--help lists up, status and down; <command> --help describes one; exit 0 without a database', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-migrate-help-'));
  // An invalid configuration: help reads none.
  const env = { DATA_DIR: dataDir, DATABASE_URL: 'mysql://nowhere', LOG_LEVEL: 'warn' };
  try {
    const help = await runEntry('admin/cli/migrate.ts', ['--help'], env);
    t.is(help.code, 0, help.stderr);
    t.regex(help.stdout, /^usage: npm run db:migrate -- \[<command>\]/);
    for (const word of ['up', 'status', 'down --yes']) t.true(help.stdout.includes(`\n  ${word} `), word);
    for (const word of ['up', 'status', 'down']) {
      const one = await runEntry('admin/cli/migrate.ts', [word, '--help'], env);
      t.is(one.code, 0, one.stderr);
      t.true(one.stdout.startsWith(`usage: npm run db:migrate -- ${word}`), one.stdout);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an unknown command, extra words or --yes on another command: a usage error, exit 2', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-migrate-usage-'));
  const env = { DATA_DIR: dataDir, DATABASE_URL: 'mysql://nowhere', LOG_LEVEL: 'warn' };
  try {
    for (const args of [['sideways'], ['status', 'extra'], ['up', '--yes'], ['down', '--force']]) {
      const r = await runEntry('admin/cli/migrate.ts', args, env);
      t.is(r.code, 2, args.join(' '));
      const body = JSON.parse(r.stdout) as { error: string; usage: string };
      t.is(body.error, 'BCK.HTTP.0400');
      t.true(body.usage.startsWith('usage: npm run db:migrate --'));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
