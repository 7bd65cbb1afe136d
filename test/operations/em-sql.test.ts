// emSql (shared/db/sql.ts) binds its values on the MikroORM transaction's own connection instead of formatting them
// into the SQL text (MikroORM's em.execute did: a NUL in a value reached SQLite inside the statement and failed it).
// A value holding NUL, quotes, `?`, `$1`, backslashes and comment markers is data, whatever it holds.
import { randomUUID } from 'node:crypto';
import { TokenLedger } from '../../shared/db/entities/index.js';
import { type SqlTx, emSql } from '../../shared/db/sql.js';
import { forEachDb } from '../support/matrix.js';

const TRICKY = `it's a "quote" ? $1 \\' \\ -- /* ; '' ?? %00 \u200f end`;
const WITH_NUL = `before\u0000after ? '`;

class Rollback extends Error {}

async function insertJournalRow(sql: SqlTx, reference: string): Promise<string> {
  const id = randomUUID();
  const n = await sql.run(
    'insert into token_ledger (id, tx_id, address, asset, delta, kind, reference, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
    [id, 'em-sql-test', 'addr', 'asset', 1n, 'test', reference, new Date()],
  );
  if (n !== 1) throw new Error(`inserted ${n} rows`);
  return id;
}

forEachDb(({ kind, stack, test }) => {
  test('quotes, ? and $1 in a value round-trip through emSql, inside a transaction and outside', async (t) => {
    const { db } = stack().ctx;
    const id = await db.em().transactional(async (tx) => {
      const sql = emSql(tx, db.dialect);
      const inserted = await insertJournalRow(sql, TRICKY);
      // Matched as a bound value too, not only stored.
      const rows = await sql.all('select id, reference from token_ledger where reference = ? and id = ?', [
        TRICKY,
        inserted,
      ]);
      t.deepEqual(rows, [{ id: inserted, reference: TRICKY }]);
      return inserted;
    });
    const outside = await emSql(db.em()).all('select reference from token_ledger where id = ?', [id]);
    t.deepEqual(outside, [{ reference: TRICKY }]);
    t.deepEqual(await emSql(db.em()).all('select ? as v', [TRICKY]), [{ v: TRICKY }]);
  });

  test('emSql runs on the transaction of its entity manager: it sees that transaction only, and rolls back with it', async (t) => {
    const { db } = stack().ctx;
    const id = randomUUID();
    await t.throwsAsync(
      db.em().transactional(async (tx) => {
        // Written by MikroORM itself in this transaction, read back through emSql: one connection.
        await tx.insert(TokenLedger, {
          id,
          txId: 'em-sql-test',
          address: 'addr',
          asset: 'asset',
          delta: 2n,
          kind: 'test',
          reference: null,
          createdAt: new Date(),
        });
        const sql = emSql(tx, db.dialect);
        t.is((await sql.all('select id from token_ledger where id = ?', [id])).length, 1);
        t.is(await sql.run('update token_ledger set reference = ? where id = ?', [TRICKY, id]), 1);
        throw new Rollback();
      }),
      { instanceOf: Rollback },
    );
    t.deepEqual(await emSql(db.em()).all('select id from token_ledger where id = ?', [id]), []);
  });

  if (kind === 'sqlite') {
    test('a NUL in a value round-trips on SQLite (it failed the statement when formatted into the SQL text)', async (t) => {
      const { db } = stack().ctx;
      const id = await db.em().transactional((tx) => insertJournalRow(emSql(tx, db.dialect), WITH_NUL));
      const rows = await emSql(db.em()).all('select reference from token_ledger where id = ? and reference = ?', [
        id,
        WITH_NUL,
      ]);
      t.deepEqual(rows, [{ reference: WITH_NUL }]);
    });
  } else {
    test('a NUL in a value is refused by PostgreSQL as a value (22021), bound; the transaction writes nothing', async (t) => {
      // PostgreSQL text cannot hold U+0000 at all: bound or not, the server refuses the value. The boundary
      // (shared/text.ts) keeps NUL from every field; this shows the refusal is about the value, not the SQL text.
      const { db } = stack().ctx;
      let id = '';
      const err = await t.throwsAsync(
        db.em().transactional(async (tx) => {
          const sql = emSql(tx, db.dialect);
          id = await insertJournalRow(sql, 'first row of the transaction');
          await insertJournalRow(sql, WITH_NUL);
        }),
      );
      t.is((err as { code?: unknown }).code, '22021');
      t.deepEqual(await emSql(db.em()).all('select id from token_ledger where id = ?', [id]), []);
    });
  }
});
