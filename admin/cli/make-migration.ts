// Developer tool: writes the next migration for both dialects from the entity definitions.
// Usage: npm run db:migration:create -- <name>
// For each dialect it brings a scratch database up to the committed migrations, then diffs the entities.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, openDb } from '../../shared/db/orm.js';

const name = process.argv[2] ?? 'change';
const pgBase = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const sqlitePath = join(tmpdir(), `payroute-mig-${randomBytes(4).toString('hex')}.sqlite`);
const sqlite = await openDb({ kind: 'sqlite', path: sqlitePath });
await migrate(sqlite);
const s = await sqlite.orm.migrator.create('shared/db/migrations/sqlite', false, false, name);
await sqlite.close();
rmSync(sqlitePath, { force: true });
console.log('sqlite:', s.fileName || '(no changes)');

const dbName = `payroute_mig_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: pgBase });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
try {
  const url = new URL(pgBase);
  url.pathname = `/${dbName}`;
  const pgDb = await openDb({ kind: 'postgresql', url: url.toString() });
  await migrate(pgDb);
  const r = await pgDb.orm.migrator.create('shared/db/migrations/postgresql', false, false, name);
  await pgDb.close();
  console.log('postgresql:', r.fileName || '(no changes)');
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
  await admin.end();
}
console.log('Add the new classes to shared/db/migrations/<dialect>/index.ts.');
