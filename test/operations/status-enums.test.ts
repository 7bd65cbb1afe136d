// Status columns hold only the values the code writes, on SQLite and PostgreSQL: the database refuses any other
// value on insert and on update (CHECK constraints from the entities' enum properties), and the migrations build
// exactly the schema the entities describe, so MikroORM finds nothing left to change.
import { type Db, migrate, openDb } from '../../shared/db/orm.js';
import { type SqlTx, emSql } from '../../shared/db/sql.js';
import { DB_KINDS, createTestDatabase } from '../support/databases.js';
import { registerOn } from '../support/matrix.js';
import { insertDelegationRow, insertPaymentRow, insertPermissionRow } from '../support/status-rows.js';

async function migrated(kind: (typeof DB_KINDS)[number]): Promise<{ db: Db; sql: SqlTx; drop(): Promise<void> }> {
  const target = await createTestDatabase(kind);
  const db = await openDb(target.database);
  await migrate(db);
  return {
    db,
    sql: emSql(db.em(), kind),
    drop: async () => {
      await db.close();
      await target.drop();
    },
  };
}

/** SQLite: `CHECK constraint failed: ...`; PostgreSQL: `... violates check constraint "..._check"`. */
const refused = { message: /check constraint/i };

const count = async (sql: SqlTx, table: string): Promise<number> =>
  Number((await sql.all(`select count(*) as n from ${table}`))[0]?.n);

for (const kind of DB_KINDS) {
  const register = registerOn(kind);

  register(`[${kind}] the migrations build the entities' schema: nothing left to change`, async (t) => {
    const m = await migrated(kind);
    try {
      t.is((await m.db.orm.schema.getUpdateSchemaSQL({ wrap: false })).trim(), '');
    } finally {
      await m.drop();
    }
  });

  register(`[${kind}] an unknown status is refused by the database, on insert and on update`, async (t) => {
    const m = await migrated(kind);
    const { sql } = m;
    try {
      // Every value the code writes is accepted.
      for (const status of ['Active', 'Revoked']) {
        t.is(await insertDelegationRow(sql, `d-${status}`, status), 1);
        t.is(await insertPermissionRow(sql, `0x${status}`, status), 1);
      }
      let n = 0;
      for (const status of ['Issued', 'Settled', 'Failed', 'Pending']) {
        for (const feeStatus of ['none', 'reserved', 'settled', 'released']) {
          t.is(await insertPaymentRow(sql, `p${n++}`, { status, feeStatus }), 1, `${status}/${feeStatus}`);
        }
      }

      // Anything else, including another letter case and the derived delegation statuses, is not.
      for (const status of ['Suspended', 'active', 'Expired', 'Exhausted', '']) {
        await t.throwsAsync(insertDelegationRow(sql, `d-bad-${status}`, status), refused, `delegation ${status}`);
        await t.throwsAsync(insertPermissionRow(sql, `0xbad-${status}`, status), refused, `permission ${status}`);
      }
      for (const status of ['Pending ', 'settled', 'Refunded']) {
        await t.throwsAsync(insertPaymentRow(sql, 'p-bad', { status, feeStatus: 'none' }), refused, status);
      }
      for (const feeStatus of ['Reserved', 'charged']) {
        await t.throwsAsync(insertPaymentRow(sql, 'p-bad', { status: 'Issued', feeStatus }), refused, feeStatus);
      }
      t.is(await count(sql, 'delegation'), 2);
      t.is(await count(sql, 'x402_permission'), 2);
      t.is(await count(sql, 'router_payment'), 16);

      await t.throwsAsync(sql.run("update delegation set status = 'Suspended' where id = 'd-Active'"), refused);
      await t.throwsAsync(
        sql.run("update x402_permission set status = 'Suspended' where permission_hash = '0xActive'"),
      );
      await t.throwsAsync(sql.run("update router_payment set status = 'Refunded' where id = 'p0'"), refused);
      await t.throwsAsync(sql.run("update router_payment set fee_status = 'charged' where id = 'p0'"), refused);
      t.deepEqual(await sql.all("select status from delegation where id = 'd-Active'"), [{ status: 'Active' }]);
      t.deepEqual(await sql.all("select status, fee_status from router_payment where id = 'p0'"), [
        { status: 'Issued', fee_status: 'none' },
      ]);
    } finally {
      await m.drop();
    }
  });
}
