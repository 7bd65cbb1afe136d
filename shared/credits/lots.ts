// The credit store: lots per (plan, holder) and the append-only credit ledger (DESIGN §4, §5). Every balance
// change is a conditional UPDATE whose affected-row count is checked, plus a ledger row; nothing here ever loads a
// balance, changes it in memory and flushes it back.
//
// Amounts are read with `cast(... as text)`: better-sqlite3 hands BIGINT columns back as JavaScript numbers, which
// silently lose precision above 2^53.
import { randomUUID } from 'node:crypto';
import type { QueryResult } from '@mikro-orm/sql';
import { CreditLedger, CreditLot } from '../db/entities/index.js';
import type { Dialect, Em } from '../db/orm.js';
import { fromColumn, sum } from '../money.js';

export type CreditKind = 'order' | 'mint' | 'mint_expirable' | 'redeem' | 'subtask';

/** Raised inside a transaction when the non-expired lots cannot cover a burn; the transaction rolls back. */
export class InsufficientCredits extends Error {
  constructor(
    readonly planId: number,
    readonly holderAddress: string,
  ) {
    super('insufficient credits');
  }
}

/** Adds a lot (expiresAt null: never expires) and its ledger row. Returns the lot id. */
export async function mintLot(
  tx: Em,
  lot: {
    planId: number;
    holderAddress: string;
    amount: bigint;
    expiresAt: Date | null;
    kind: CreditKind;
    reference: string | null;
  },
  now: Date,
): Promise<string> {
  const id = randomUUID();
  await tx.insert(CreditLot, {
    id,
    planId: lot.planId,
    holderAddress: lot.holderAddress,
    remaining: lot.amount,
    expiresAt: lot.expiresAt,
    createdAt: now,
  });
  await appendLedger(
    tx,
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

export async function appendLedger(
  tx: Em,
  row: { planId: number; holderAddress: string; delta: bigint; kind: CreditKind; reference: string | null },
  now: Date,
): Promise<void> {
  await tx.insert(CreditLedger, { id: randomUUID(), ...row, createdAt: now });
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
  if (typeof v === 'string') return /^[0-9]+$/.test(v) ? Number(v) : new Date(v).getTime();
  throw new TypeError('not a datetime column value');
}

const LIVE = 'plan_id = ? and holder_address = ? and remaining > 0 and (expires_at is null or expires_at > ?)';

/**
 * Non-expired lots with credits left, soonest-expiring first (never-expiring last), ties by id. With `lock` on
 * PostgreSQL the rows are locked first, always in id order, so concurrent burns of one holder cannot deadlock and
 * each sees the amounts the previous one left. (SQLite: the transaction's first write already holds the database
 * write lock.)
 */
async function liveLots(
  tx: Em,
  dialect: Dialect,
  planId: number,
  holder: string,
  now: Date,
  lock: boolean,
): Promise<LiveLot[]> {
  if (lock && dialect === 'postgresql') {
    await tx.execute(`select id from credit_lot where ${LIVE} order by id for update`, [planId, holder, now]);
  }
  const rows = await tx.execute<{ id: string; remaining: string; expires_at: unknown }[]>(
    `select id, cast(remaining as text) as remaining, expires_at from credit_lot where ${LIVE}`,
    [planId, holder, now],
  );
  const lots = rows.map((r) => ({ id: r.id, remaining: fromColumn(r.remaining), expiresAt: toEpochMs(r.expires_at) }));
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
  const rows = await em.execute<{ remaining: string }[]>(
    `select cast(remaining as text) as remaining from credit_lot where ${LIVE}`,
    [planId, holder, now],
  );
  return sum(rows.map((r) => fromColumn(r.remaining)));
}

/** Whether the address has ever held credits of the plan (lots are never deleted). */
export async function hasHeldCredits(em: Em, planId: number, holder: string): Promise<boolean> {
  return (await em.count(CreditLot, { planId, holderAddress: holder })) > 0;
}

/**
 * Burns `amount` from the holder's non-expired lots, soonest-expiring first, inside the caller's transaction.
 * Each lot is one conditional UPDATE (`remaining >= take`, also re-checking expiry) with its row count checked;
 * a shortfall throws InsufficientCredits and the caller's transaction rolls everything back.
 */
export async function burnLots(
  tx: Em,
  dialect: Dialect,
  burn: { planId: number; holderAddress: string; amount: bigint; kind: CreditKind; reference: string },
  now: Date,
): Promise<void> {
  const lots = await liveLots(tx, dialect, burn.planId, burn.holderAddress, now, true);
  let left = burn.amount;
  for (const lot of lots) {
    if (left === 0n) break;
    // bigint: Math.min does not apply.
    let take = left;
    if (lot.remaining < take) take = lot.remaining;
    const res = await tx.execute<QueryResult>(
      'update credit_lot set remaining = remaining - ? where id = ? and remaining >= ? and (expires_at is null or expires_at > ?)',
      [take, lot.id, take, now],
      'run',
    );
    if (res.affectedRows !== 1) throw new InsufficientCredits(burn.planId, burn.holderAddress);
    left -= take;
  }
  if (left > 0n) throw new InsufficientCredits(burn.planId, burn.holderAddress);
  await appendLedger(
    tx,
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
