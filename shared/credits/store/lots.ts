// The credit store: lots per (plan, holder), the holder's running total, and the append-only credit ledger. Every
// balance change is a conditional UPDATE whose affected-row count is checked, plus a ledger row; nothing here ever
// loads a balance, changes it in memory and flushes it back, because several processes share the database and
// only the database can decide between them.
//
// credit_holding.total is the sum of `remaining` over the pair's lots that were not yet reclaimed (an expired lot
// is reclaimed, its remainder zeroed and written off in the ledger, by the next mint to the pair), so the ledger's
// deltas of a pair sum to it. A balance is a sum of lots, and a sum can leave the 64-bit range although every lot
// fits: the total is the one place that bound is checked, by the conditional UPDATE that adds to it. Its row is
// also the pair's lock: every writer of a pair's lots (mintLot, burnLots) changes it FIRST, so on PostgreSQL
// concurrent mints and burns of one pair queue on one row, always in the same order (no deadlock), and see the
// lots the previous one left. (SQLite: the transaction's first write already holds the database write lock.)
//
// All SQL here is bound (emSql), never formatted into the statement text. Amounts are read with
// `cast(... as text)`: better-sqlite3 hands BIGINT columns back as JavaScript numbers, which silently lose
// precision above 2^53.
import { randomUUID } from 'node:crypto';
import type { Dialect, Em } from '../../db/orm.js';
import { type SqlTx, emSql } from '../../db/sql.js';
import { AppError } from '../../errors/app-error.js';
import { MAX_INT64, fromColumn, sum, toWire } from '../../money.js';
import { InvariantError } from '../../errors/invariant.js';

export type CreditKind = 'order' | 'mint' | 'mint_expirable' | 'redeem' | 'subtask' | 'expire';

/** Raised inside a transaction when the non-expired lots cannot cover a burn; the transaction rolls back. */
export class InsufficientCredits extends Error {
  constructor(
    readonly planId: number,
    readonly holderAddress: string,
  ) {
    super('insufficient credits');
  }
}

export interface NewLot {
  readonly planId: number;
  readonly holderAddress: string;
  readonly amount: bigint;
  /** null: never expires. */
  readonly expiresAt: Date | null;
  readonly kind: CreditKind;
  readonly reference: string | null;
}

/**
 * Adds a lot and its ledger row inside the caller's transaction; returns the lot id. A lot that would take the
 * holder's credits of the plan past 2^63 - 1 is a 400 (BCK.HTTP.0400), and the caller's transaction rolls back.
 */
export async function mintLot(tx: Em, lot: NewLot, now: Date): Promise<string> {
  const sql = emSql(tx);
  // First statement a write, on the pair's row: it takes the pair's lock (PostgreSQL) and the write lock (SQLite).
  await sql.run(
    `insert into credit_holding (plan_id, holder_address, total) values (?, ?, 0)
     on conflict (plan_id, holder_address) do update set total = credit_holding.total`,
    [lot.planId, lot.holderAddress],
  );
  const reclaimed = await reclaimExpired(sql, lot.planId, lot.holderAddress, now);
  // total - reclaimed + amount, bounded on the side that cannot overflow (MAX - amount >= 0 as amount <= MAX).
  const added = await sql.run(
    `update credit_holding set total = total - ? + ?
     where plan_id = ? and holder_address = ? and total - ? <= ?`,
    [reclaimed, lot.amount, lot.planId, lot.holderAddress, reclaimed, MAX_INT64 - lot.amount],
  );
  if (added !== 1) {
    throw new AppError('BCK.HTTP.0400', {
      details: `${lot.holderAddress} would hold more than ${MAX_INT64} credits of plan ${lot.planId}`,
      params: { planId: String(lot.planId), holderAddress: lot.holderAddress, amount: toWire(lot.amount) },
    });
  }
  const id = randomUUID();
  await sql.run(
    'insert into credit_lot (id, plan_id, holder_address, remaining, expires_at, created_at) values (?, ?, ?, ?, ?, ?)',
    [id, lot.planId, lot.holderAddress, lot.amount, lot.expiresAt, now],
  );
  await appendLedger(
    sql,
    {
      planId: lot.planId,
      holderAddress: lot.holderAddress,
      delta: lot.amount,
      kind: lot.kind,
      reference: lot.reference ?? id,
    },
    now,
  );
  return id;
}

/**
 * Writes off the remainder of the pair's expired lots (they no longer count, and would otherwise keep counting
 * against the 64-bit bound of the total forever): one conditional UPDATE and one `expire` ledger row per lot.
 * Runs under the pair's lock (mintLot), so nothing else changes these lots meanwhile. Returns the sum written off.
 */
async function reclaimExpired(sql: SqlTx, planId: number, holder: string, now: Date): Promise<bigint> {
  const rows = await sql.all(
    `select id, cast(remaining as text) as remaining from credit_lot
     where plan_id = ? and holder_address = ? and remaining > 0 and expires_at is not null and expires_at <= ?
     order by id`,
    [planId, holder, now],
  );
  let reclaimed = 0n;
  for (const r of rows) {
    const id = String(r.id);
    const remaining = fromColumn(r.remaining);
    const n = await sql.run('update credit_lot set remaining = 0 where id = ? and remaining = ?', [id, remaining]);
    if (n !== 1) throw new InvariantError(`credit lot ${id} changed under the holding lock`);
    await appendLedger(sql, { planId, holderAddress: holder, delta: -remaining, kind: 'expire', reference: id }, now);
    reclaimed += remaining;
  }
  return reclaimed;
}

async function appendLedger(
  sql: SqlTx,
  row: { planId: number; holderAddress: string; delta: bigint; kind: CreditKind; reference: string | null },
  now: Date,
): Promise<void> {
  await sql.run(
    'insert into credit_ledger (id, plan_id, holder_address, delta, kind, reference, created_at) values (?, ?, ?, ?, ?, ?, ?)',
    [randomUUID(), row.planId, row.holderAddress, row.delta, row.kind, row.reference, now],
  );
}

interface LiveLot {
  readonly id: string;
  readonly remaining: bigint;
  /** Epoch ms; null never expires. */
  readonly expiresAt: number | null;
}

function toEpochMs(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'number') return v; // SQLite stores datetimes as epoch milliseconds
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return /^[0-9]+$/.test(v) ? Number(v) : new Date(v).getTime();
  throw new TypeError('not a datetime column value');
}

const LIVE = 'plan_id = ? and holder_address = ? and remaining > 0 and (expires_at is null or expires_at > ?)';

/** Non-expired lots with credits left, soonest-expiring first (never-expiring last), ties by id. */
async function liveLots(sql: SqlTx, planId: number, holder: string, now: Date): Promise<LiveLot[]> {
  const rows = await sql.all(
    `select id, cast(remaining as text) as remaining, expires_at from credit_lot where ${LIVE}`,
    [planId, holder, now],
  );
  const lots = rows.map((r) => ({
    id: String(r.id),
    remaining: fromColumn(r.remaining),
    expiresAt: toEpochMs(r.expires_at),
  }));
  return lots.sort((a, b) => {
    if (a.expiresAt !== b.expiresAt) {
      if (a.expiresAt === null) return 1;
      if (b.expiresAt === null) return -1;
      return a.expiresAt - b.expiresAt;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** Sum of the non-expired lots (decimal-exact; summed in bigint, never by the database). */
export async function creditBalance(em: Em, planId: number, holder: string, now: Date): Promise<bigint> {
  const rows = await emSql(em).all(`select cast(remaining as text) as remaining from credit_lot where ${LIVE}`, [
    planId,
    holder,
    now,
  ]);
  return sum(rows.map((r) => fromColumn(r.remaining)));
}

/**
 * How many more credits of the plan the holder can receive now: 2^63 - 1 less the pair's total, expired remainders
 * not counted (the next mint writes them off). A read, not a reservation: for refusing before money moves (a card
 * charge that a mint would then have to undo); mintLot's conditional UPDATE still decides.
 */
export async function creditHeadroom(em: Em, planId: number, holder: string, now: Date): Promise<bigint> {
  const sql = emSql(em);
  const [holding] = await sql.all(
    'select cast(total as text) as total from credit_holding where plan_id = ? and holder_address = ?',
    [planId, holder],
  );
  const expired = await sql.all(
    `select cast(remaining as text) as remaining from credit_lot
     where plan_id = ? and holder_address = ? and remaining > 0 and expires_at is not null and expires_at <= ?`,
    [planId, holder, now],
  );
  const held =
    (holding === undefined ? 0n : fromColumn(holding.total)) - sum(expired.map((r) => fromColumn(r.remaining)));
  return MAX_INT64 - held;
}

/** Whether the address has ever held credits of the plan (lots are never deleted). */
export async function hasHeldCredits(em: Em, planId: number, holder: string): Promise<boolean> {
  const rows = await emSql(em).all(
    'select 1 as held from credit_lot where plan_id = ? and holder_address = ? limit 1',
    [planId, holder],
  );
  return rows.length > 0;
}

/**
 * Burns `amount` from the holder's non-expired lots, soonest-expiring first, inside the caller's transaction.
 * The pair's total goes first (the pair's lock, and a total below `amount` already means too few credits); then
 * each lot is one conditional UPDATE (`remaining >= take`, also re-checking expiry) with its row count checked.
 * A shortfall throws InsufficientCredits and the caller's transaction rolls everything back.
 */
export async function burnLots(
  tx: Em,
  dialect: Dialect,
  burn: { planId: number; holderAddress: string; amount: bigint; kind: CreditKind; reference: string },
  now: Date,
): Promise<void> {
  const sql = emSql(tx, dialect);
  const held = await sql.run(
    'update credit_holding set total = total - ? where plan_id = ? and holder_address = ? and total >= ?',
    [burn.amount, burn.planId, burn.holderAddress, burn.amount],
  );
  if (held !== 1) throw new InsufficientCredits(burn.planId, burn.holderAddress);
  const lots = await liveLots(sql, burn.planId, burn.holderAddress, now);
  let left = burn.amount;
  for (const lot of lots) {
    if (left === 0n) break;
    // bigint: Math.min does not apply.
    let take = left;
    if (lot.remaining < take) take = lot.remaining;
    const n = await sql.run(
      'update credit_lot set remaining = remaining - ? where id = ? and remaining >= ? and (expires_at is null or expires_at > ?)',
      [take, lot.id, take, now],
    );
    if (n !== 1) throw new InsufficientCredits(burn.planId, burn.holderAddress);
    left -= take;
  }
  if (left > 0n) throw new InsufficientCredits(burn.planId, burn.holderAddress);
  await appendLedger(
    sql,
    {
      planId: burn.planId,
      holderAddress: burn.holderAddress,
      delta: -burn.amount,
      kind: burn.kind,
      reference: burn.reference,
    },
    now,
  );
}
