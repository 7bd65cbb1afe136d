// The start-up check that SECRETS_KEY (or the generated DATA_DIR/secrets.key) is the key the data is sealed with.
// Without it, a process started with another key comes up ready and answers 500 on everything that opens a sealed
// value (the JWKS, plan tokens, every payment). The check value (shared/crypto/secrets.ts) lives in the database,
// beside what it vouches for: a restored backup brings its own.
import { existsSync } from 'node:fs';
import type { Config } from '../../config/index.js';
import { secretsEqual } from '../crypto/hashing.js';
import {
  type SecretBox,
  type SecretsKeySource,
  describeKeySource,
  generatedKeyPath,
  readKeyFile,
  secretBox,
} from '../crypto/secrets.js';
import type { Db } from '../db/orm.js';
import { type SqlTx, emSql } from '../db/sql.js';
import { SEALED_COLUMNS } from './sealed-columns.js';

/** The one row of secrets_key_check. */
export const KEY_CHECK_ID = 'current';

const SELECT_CHECK = 'select key_check from secrets_key_check where id = ?';

/** A process whose key does not open the data: refused at start, with a message for the operator. */
export class SecretsKeyMismatch extends Error {
  override readonly name = 'SecretsKeyMismatch';
}

/** matched: the stored check value is this key's; recorded: there was none and this start wrote it (the key
 *  opened the sealed data, or there was none); unrecorded: the schema has no check table yet (a proxy started
 *  before the migrations), so only the sealed data was tried. */
export type KeyCheckOutcome = 'matched' | 'recorded' | 'unrecorded';

export interface KeyCheckSubject {
  readonly box: SecretBox;
  readonly source: SecretsKeySource;
  readonly dataDir: string;
  readonly database: Config['database'];
}

type StoredCheck = { readonly kind: 'present'; readonly value: string } | { readonly kind: 'absent' | 'no_table' };

/** A statement failed because its table does not exist yet (the migrations have not run). */
function isMissingTable(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e instanceof Error && i < 5; e = e.cause, i++) {
    if ((e as { code?: unknown }).code === '42P01' || /no such table|does not exist/i.test(e.message)) return true;
  }
  return false;
}

/** The stored check value, read with `sql` (a transaction's, or the pool's). */
export async function readKeyCheck(sql: SqlTx): Promise<StoredCheck> {
  try {
    const [row] = await sql.all(SELECT_CHECK, [KEY_CHECK_ID]);
    return row === undefined ? { kind: 'absent' } : { kind: 'present', value: String(row.key_check) };
  } catch (err) {
    if (isMissingTable(err)) return { kind: 'no_table' };
    throw err;
  }
}

/** One sealed value of each sealed column that has one (tables not created yet are skipped). */
async function sealedSample(sql: SqlTx): Promise<string[]> {
  const out: string[] = [];
  for (const c of SEALED_COLUMNS) {
    try {
      const [row] = await sql.all(`select ${c.column} as v from ${c.table} where ${c.column} is not null limit 1`);
      if (typeof row?.v === 'string') out.push(row.v);
    } catch (err) {
      if (!isMissingTable(err)) throw err;
    }
  }
  return out;
}

const opens = (box: SecretBox, sealed: string): boolean => {
  try {
    box.open(sealed);
    return true;
  } catch {
    return false;
  }
};

function describeDatabase(database: Config['database']): string {
  if (database.kind === 'sqlite') return `the SQLite database ${database.path}`;
  // Host and database name only: the URL's user and password stay out of messages.
  const url = new URL(database.url);
  return `the PostgreSQL database "${decodeURIComponent(url.pathname.slice(1))}" on ${url.host}`;
}

/**
 * The refusal, naming the key configured (never its value) and what to do. `opensWith` tells whether another key
 * opens the data: SECRETS_KEY was set over a data directory that still holds the generated key the data was made
 * with, the report this check answers, is then named as such.
 */
function mismatch(s: KeyCheckSubject, opensWith: (box: SecretBox) => boolean): SecretsKeyMismatch {
  const lines = [
    `${describeKeySource(s.source)} does not open the data in ${describeDatabase(s.database)}: its stored secrets (wallet and signing keys) were sealed with another key.`,
  ];
  const file = generatedKeyPath(s.dataDir);
  const generated = s.source.kind === 'env' && existsSync(file) ? readKeyFile(file) : undefined;
  if (generated?.ok === true && opensWith(secretBox(generated.key))) {
    lines.push(
      `The data opens with the generated key in DATA_DIR/secrets.key (${file}), used while SECRETS_KEY was unset.`,
      'To keep that key, unset SECRETS_KEY (remove it from .env) or set SECRETS_KEY to the content of that file.',
      `To move the data to the new SECRETS_KEY, stop every payroute process and run: npm run cli -- secrets rotate --old-key-file ${file}`,
    );
  } else {
    lines.push(
      s.source.kind === 'env'
        ? 'Start with the SECRETS_KEY the data was sealed with,'
        : 'Start with the key the data was sealed with (set SECRETS_KEY again if it was set before),',
      'or re-encrypt the data with this key: stop every payroute process and run, with this key configured,',
      '`npm run cli -- secrets rotate --old-key-file FILE` (FILE holding the previous key) or',
      '`npm run cli -- secrets rotate` with SECRETS_KEY_PREVIOUS set to it (README, "Changing the secrets key").',
    );
  }
  return new SecretsKeyMismatch(lines.join('\n'));
}

/**
 * Refuses (SecretsKeyMismatch) a key that does not open the data. The first start of an empty database records the
 * key's check value; a database from before the check (sealed data, no check value) gets it once the key has opened
 * one of its sealed values. Processes starting together with different keys on an empty database: the first
 * insert wins, and the others read it back and are refused.
 */
export async function verifySecretsKey(db: Db, s: KeyCheckSubject, now: Date): Promise<KeyCheckOutcome> {
  const sql = emSql(db.em(), db.dialect);
  const stored = await readKeyCheck(sql);
  if (stored.kind === 'present') {
    if (secretsEqual(stored.value, s.box.keyCheck)) return 'matched';
    throw mismatch(s, (box) => secretsEqual(stored.value, box.keyCheck));
  }
  const sample = await sealedSample(sql);
  if (sample.length > 0 && !sample.some((v) => opens(s.box, v))) {
    throw mismatch(s, (box) => sample.some((v) => opens(box, v)));
  }
  if (stored.kind === 'no_table') return 'unrecorded';
  await sql.run(
    'insert into secrets_key_check (id, key_check, updated_at) values (?, ?, ?) on conflict (id) do nothing',
    [KEY_CHECK_ID, s.box.keyCheck, now],
  );
  const recorded = await readKeyCheck(sql);
  if (recorded.kind === 'present' && secretsEqual(recorded.value, s.box.keyCheck)) return 'recorded';
  throw mismatch(s, (box) => recorded.kind === 'present' && secretsEqual(recorded.value, box.keyCheck));
}

/** For /readyz: false once the stored check value is another key's (the data was rotated under this process). */
export async function keyStillMatches(db: Db, box: SecretBox): Promise<boolean> {
  const stored = await readKeyCheck(emSql(db.em(), db.dialect));
  return stored.kind !== 'present' || secretsEqual(stored.value, box.keyCheck);
}
