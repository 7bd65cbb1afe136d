// `npm run cli -- secrets rotate`: reseals every sealed column under the configured key and records its check
// value, in ONE transaction: a refusal (a value neither key opens, a previous key that is not the data's) or a
// crash changes nothing. Each value is tried with the new key first: a value already under it (a rotation begun
// under processes still sealing with the old key, a database restored over a half-rotated copy) is kept as it is,
// so running the rotation again always finishes it. The service should be stopped meanwhile: a process still
// running with the old key keeps sealing with it (its /readyz turns 503 once the check value changes), and its
// rows are what a second run picks up.
import { secretsEqual } from '../crypto/hashing.js';
import type { SecretBox } from '../crypto/secrets.js';
import type { Db } from '../db/orm.js';
import type { SqlTx } from '../db/sql.js';
import { KEY_CHECK_ID, readKeyCheck } from './key-check.js';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.js';
import { InvariantError } from '../errors/invariant.js';

/** Rows read per statement: bounds memory, whatever the size of a table. */
const PAGE = 500;

/** A rotation that must not run: the message says why; nothing was changed. */
export class RotationRefused extends Error {
  override readonly name = 'RotationRefused';
}

export interface ColumnReport {
  readonly table: string;
  readonly column: string;
  /** Values opened with the previous key and sealed again with the new one. */
  readonly resealed: number;
  /** Values the new key opened already (left as they were). */
  readonly alreadyNew: number;
}

function tryOpen(box: SecretBox, sealed: string): string | undefined {
  try {
    return box.open(sealed);
  } catch {
    return undefined;
  }
}

async function resealColumn(tx: SqlTx, c: SealedColumn, from: SecretBox, to: SecretBox): Promise<ColumnReport> {
  const select =
    `select ${c.key} as k, ${c.column} as v from ${c.table} ` +
    `where ${c.column} is not null and ${c.key} > ? order by ${c.key} limit ${PAGE}`;
  // Conditional on the value read: nothing can have changed it inside this transaction, but a row is never
  // overwritten with a value sealed from anything but what it held.
  const update = `update ${c.table} set ${c.column} = ? where ${c.key} = ? and ${c.column} = ?`;
  let resealed = 0;
  let alreadyNew = 0;
  // Primary keys here are non-empty text: '' sorts before every one of them.
  let after = '';
  for (;;) {
    const rows = await tx.all(select, [after]);
    for (const row of rows) {
      const key = String(row.k);
      const sealed = String(row.v);
      after = key;
      if (tryOpen(to, sealed) !== undefined) {
        alreadyNew += 1;
        continue;
      }
      const plain = tryOpen(from, sealed);
      if (plain === undefined) {
        throw new RotationRefused(
          `${c.table}.${c.column} of row ${key} opens with neither the previous key nor the configured one: ` +
            'nothing was changed (is the previous key the one the data was sealed with?)',
        );
      }
      if ((await tx.run(update, [to.seal(plain), key, sealed])) !== 1) {
        throw new InvariantError(`${c.table} row ${key} changed during the rotation`);
      }
      resealed += 1;
    }
    if (rows.length < PAGE) break;
  }
  return { table: c.table, column: c.column, resealed, alreadyNew };
}

/** Reseals every sealed value from `from` (the previous key) to `to` (the configured key); see the file comment. */
export async function rotateSecrets(db: Db, from: SecretBox, to: SecretBox, now: Date): Promise<ColumnReport[]> {
  if (secretsEqual(from.keyCheck, to.keyCheck)) {
    throw new RotationRefused('the previous key is the configured key: there is nothing to rotate');
  }
  return db.sql.transaction(async (tx) => {
    const stored = await readKeyCheck(tx);
    if (stored.kind === 'no_table') throw new Error('the secrets_key_check table is missing: migrate first');
    // The data's check value names its key: a previous key that is not it (nor a rotation to `to` already
    // recorded, which a second run just confirms) is refused before a row is read.
    if (
      stored.kind === 'present' &&
      !secretsEqual(stored.value, from.keyCheck) &&
      !secretsEqual(stored.value, to.keyCheck)
    ) {
      throw new RotationRefused(
        "the previous key is not the key the data is sealed with (the stored check value is another key's): nothing was changed",
      );
    }
    const columns: ColumnReport[] = [];
    for (const c of SEALED_COLUMNS) columns.push(await resealColumn(tx, c, from, to));
    await tx.run(
      'insert into secrets_key_check (id, key_check, updated_at) values (?, ?, ?) ' +
        'on conflict (id) do update set key_check = excluded.key_check, updated_at = excluded.updated_at',
      [KEY_CHECK_ID, to.keyCheck, now],
    );
    return columns;
  });
}
