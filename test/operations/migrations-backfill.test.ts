// Migrations that carry existing rows over, on SQLite and PostgreSQL: a database is brought up to the migration
// before the one under test, given rows as the previous code wrote them, then migrated to the end.
import { randomUUID } from 'node:crypto';
import { mintLot } from '../../shared/credits/store/lots.js';
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { postgresqlMigrations } from '../../shared/db/migrations/postgresql/index.js';
import { sqliteMigrations } from '../../shared/db/migrations/sqlite/index.js';
import { type Db, openDb } from '../../shared/db/orm.js';
import { emSql, timestamp } from '../../shared/db/sql.js';
import { DB_KINDS, type DbKind, createTestDatabase } from '../support/databases.js';
import { registerOn } from '../support/matrix.js';
import { insertDelegationRow, insertPaymentRow, insertPermissionRow } from '../support/status-rows.js';

const MAX = 9_223_372_036_854_775_807n;

/** Opens a fresh database migrated up to (not including) the migration whose name ends with `suffix`. */
async function migratedUpTo(
  kind: DbKind,
  suffix: string,
): Promise<{ db: Db; rest(): Promise<void>; drop(): Promise<void> }> {
  const target = await createTestDatabase(kind);
  const db = await openDb(target.database);
  const list = kind === 'sqlite' ? sqliteMigrations : postgresqlMigrations;
  const at = list.findIndex((m) => m.name.endsWith(suffix));
  const before = list[at - 1];
  if (at < 1 || before === undefined) throw new Error(`no migration before ${suffix}`);
  await db.orm.migrator.up({ to: before.name });
  return {
    db,
    rest: async () => {
      await db.orm.migrator.up();
    },
    drop: async () => {
      await db.close();
      await target.drop();
    },
  };
}

for (const kind of DB_KINDS) {
  const register = registerOn(kind);

  register(
    `[${kind}] credit_holding: the backfill sums every pair's lots, a pair past 2^63 - 1 at 2^63 - 1`,
    async (t) => {
      const m = await migratedUpTo(kind, '_credit_holding');
      try {
        const sql = emSql(m.db.em(), kind);
        const past = new Date(Date.now() - 60_000);
        const lot = (planId: number, holder: string, remaining: bigint, expiresAt: Date | null = null) =>
          sql.run(
            'insert into credit_lot (id, plan_id, holder_address, remaining, expires_at, created_at) values (?, ?, ?, ?, ?, ?)',
            [randomUUID(), planId, holder, remaining, expiresAt, past],
          );
        await lot(1, '0xA', 5n);
        await lot(1, '0xA', 7n, past); // expired: still counted until a mint writes it off
        await lot(1, '0xA', 0n);
        await lot(2, '0xA', 3n); // another plan of the same holder
        await lot(1, '0xB', MAX); // what the defect could mint: two lots of 2^63 - 1
        await lot(1, '0xB', MAX);
        await lot(1, '0xC', 0n);
        await lot(1, '0xD', (1n << 32n) + 1n); // both halves of the split sum
        await lot(1, '0xD', (1n << 32n) - 1n);
        await m.rest();
        const rows = await sql.all(
          'select plan_id, holder_address, cast(total as text) as total from credit_holding order by plan_id, holder_address',
        );
        t.deepEqual(
          rows.map((r) => [Number(r.plan_id), r.holder_address, r.total]),
          [
            [1, '0xA', '12'],
            [1, '0xB', MAX.toString()],
            [1, '0xC', '0'],
            [1, '0xD', (1n << 33n).toString()],
            [2, '0xA', '3'],
          ],
        );
        // The backfilled total is what the next mint starts from: the expired 7 is written off, 5 stay.
        await m.db
          .em()
          .transactional((tx) =>
            mintLot(
              tx,
              { planId: 1, holderAddress: '0xA', amount: MAX - 5n, expiresAt: null, kind: 'mint', reference: null },
              new Date(),
            ),
          );
        const a = await sql.all(
          'select cast(total as text) as total from credit_holding where plan_id = 1 and holder_address = ?',
          ['0xA'],
        );
        t.is(a[0]?.total, MAX.toString());
      } finally {
        await m.drop();
      }
    },
  );

  register(
    `[${kind}] permission_signature_hash: each signature becomes the SHA-256 the check compares, in place`,
    async (t) => {
      const m = await migratedUpTo(kind, '_permission_signature_hash');
      try {
        const sql = emSql(m.db.em(), kind);
        const signatures = [`0x${'ab'.repeat(65)}`, `0x${'0c'.repeat(64)}1b`];
        for (const [i, signature] of signatures.entries()) {
          await sql.run(
            `insert into x402_permission (permission_hash, user_id, owner_address, scheme, network, plan_id, agent_id,
             http_verb, resource_url, resource_description, delegation_id, nonce, signature, status, used_credits,
             revoked_at, created_at)
           values (?, 'u', '0xA', 'svc:erc4337', 'eip155:84532', 1, null, null, 'https://a.example/x', null, null, ?, ?,
             'Active', 0, null, ?)`,
            [`0x${String(i).repeat(64)}`, `0x${'11'.repeat(32)}`, signature, new Date()],
          );
        }
        await m.rest();
        const rows = await sql.all('select * from x402_permission order by permission_hash');
        t.deepEqual(
          rows.map((r) => r.signature_hash),
          signatures.map((sig) => sha256Hex(sig)),
        );
        t.false(
          rows.some((r) => 'signature' in r),
          'the clear column is gone',
        );
        const values = rows.flatMap((r) => Object.values(r).map(String));
        t.false(
          values.some((v) => signatures.some((sig) => v.includes(sig.slice(2)))),
          'no value holds a signature',
        );
      } finally {
        await m.drop();
      }
    },
  );

  register(
    `[${kind}] oauth_disable_and_device_rate: grants of clients disabled before it are revoked, their delegations and refresh tokens with them`,
    async (t) => {
      const m = await migratedUpTo(kind, '_oauth_disable_and_device_rate');
      try {
        const sql = emSql(m.db.em(), kind);
        const disabledAt = new Date(Date.now() - 3_600_000);
        const client = (id: string, disabled: Date | null) =>
          sql.run(
            `insert into oauth_client (client_id, name, redirect_uris, verified, account_level, allowed_consent_types,
               disabled_at, created_at, updated_at) values (?, ?, '[]', ?, ?, '["commerce"]', ?, ?, ?)`,
            [id, id, 0, 0, disabled, disabledAt, disabledAt],
          );
        const grant = (id: string, clientId: string, status: string, reason: string | null) =>
          sql.run(
            `insert into oauth_grant (id, user_id, client_id, consent_type, delegation_id, status, revoked_at,
               revoked_reason, created_at) values (?, 'u', ?, 'commerce', ?, ?, ?, ?, ?)`,
            [id, clientId, `d-${id}`, status, status === 'Revoked' ? disabledAt : null, reason, disabledAt],
          );
        const refresh = (grantId: string) =>
          sql.run(
            `insert into oauth_refresh_token (token_hash, grant_id, client_id, expires_at, rotated_at, revoked_at,
               created_at) values (?, ?, (select client_id from oauth_grant where id = ?), ?, null, null, ?)`,
            [`h-${grantId}`, grantId, grantId, new Date(Date.now() + 86_400_000), disabledAt],
          );
        await client('off', disabledAt);
        await client('on', null);
        for (const [id, clientId, status, reason] of [
          ['g-live', 'off', 'Active', null],
          ['g-user', 'off', 'Revoked', 'user'],
          ['g-other', 'on', 'Active', null],
        ] as const) {
          await grant(id, clientId, status, reason);
          await insertDelegationRow(sql, `d-${id}`, status);
          await refresh(id);
        }
        await m.rest();
        const reasons = await sql.all('select id, status, revoked_reason from oauth_grant order by id');
        t.deepEqual(reasons, [
          { id: 'g-live', status: 'Revoked', revoked_reason: 'client_disabled' },
          { id: 'g-other', status: 'Active', revoked_reason: null },
          { id: 'g-user', status: 'Revoked', revoked_reason: 'user' },
        ]);
        t.deepEqual(await sql.all('select id, status from delegation order by id'), [
          { id: 'd-g-live', status: 'Revoked' },
          { id: 'd-g-other', status: 'Active' },
          { id: 'd-g-user', status: 'Revoked' },
        ]);
        const revoked = await sql.all(
          'select token_hash from oauth_refresh_token where revoked_at is not null order by token_hash',
        );
        t.deepEqual(
          revoked.map((r) => r.token_hash),
          ['h-g-live'],
        );
        // Revoked when the client was disabled.
        const at = await sql.all(`select revoked_at from oauth_grant where id = 'g-live'`);
        t.is(timestamp(at[0]?.revoked_at).getTime(), disabledAt.getTime());
      } finally {
        await m.drop();
      }
    },
  );

  register(
    `[${kind}] status_enums: known statuses kept, unknown ones mapped to the state the code gave them`,
    async (t) => {
      const m = await migratedUpTo(kind, '_status_enums');
      try {
        const sql = emSql(m.db.em(), kind);
        await insertDelegationRow(sql, 'd-active', 'Active');
        await insertDelegationRow(sql, 'd-revoked', 'Revoked');
        await insertDelegationRow(sql, 'd-odd', 'Suspended');
        await insertPermissionRow(sql, '0xactive', 'Active');
        await insertPermissionRow(sql, '0xodd', 'active');
        await insertPaymentRow(sql, 'p1', { status: 'Settled', feeStatus: 'settled' });
        await insertPaymentRow(sql, 'p2', { status: 'Pending', feeStatus: 'reserved' });
        await insertPaymentRow(sql, 'p3', { status: 'Refunded', feeStatus: 'charged' });
        await insertPaymentRow(sql, 'p4', { status: 'Claimed', feeStatus: 'none', failureReason: 'kept as written' });
        await m.rest();
        t.deepEqual(await sql.all('select id, status from delegation order by id'), [
          { id: 'd-active', status: 'Active' },
          { id: 'd-odd', status: 'Revoked' },
          { id: 'd-revoked', status: 'Revoked' },
        ]);
        t.deepEqual(await sql.all('select permission_hash, status from x402_permission order by permission_hash'), [
          { permission_hash: '0xactive', status: 'Active' },
          { permission_hash: '0xodd', status: 'Revoked' },
        ]);
        t.deepEqual(await sql.all('select id, status, fee_status, failure_reason from router_payment order by id'), [
          { id: 'p1', status: 'Settled', fee_status: 'settled', failure_reason: null },
          { id: 'p2', status: 'Pending', fee_status: 'reserved', failure_reason: null },
          {
            id: 'p3',
            status: 'Failed',
            fee_status: 'settled',
            failure_reason: 'stored status Refunded is not a payment status',
          },
          { id: 'p4', status: 'Failed', fee_status: 'none', failure_reason: 'kept as written' },
        ]);
        // (SQLite rebuilt the three tables: that their indexes came back is status-enums.test.ts's schema check.)
      } finally {
        await m.drop();
      }
    },
  );
}
