// The spending delegation as a capped account: `amount_spent_cents` against `spending_limit_cents`, usable while
// its status is Active and it has not expired, journalled in `delegation_transaction`. The conditions are written
// twice, side by side: as the charge's SQL (which decides) and as a prediction from a row read earlier (which only
// refuses early, and may be stale).
import { int64 } from '../db/sql.js';
import { uuidv7 } from '../ids.js';
import type { AccountKind, DelegationAccount, RefusalCause } from './accounts.js';

const CHARGE = `update delegation set amount_spent_cents = amount_spent_cents + ?, transaction_count = transaction_count + 1
     where id = ? and user_id = ? and status = 'Active' and expires_at > ? and (amount_spent_cents + ? <= spending_limit_cents)`;

const GIVE_BACK =
  'update delegation set amount_spent_cents = amount_spent_cents - ? where id = ? and user_id = ? and (amount_spent_cents >= ?)';

const JOURNAL =
  'insert into delegation_transaction (id, delegation_id, kind, amount_cents, reference, description, created_at) values (?, ?, ?, ?, ?, ?, ?)';

// The comparisons are the UPDATE's own, made by the database, so the reason given is the condition that failed
// (no date or 64-bit value is parsed here). Booleans arrive as true/false (PostgreSQL) or 1/0 (SQLite).
const WHY = `select status, (expires_at > ?) as live, spending_limit_cents - amount_spent_cents as remaining
     from delegation where id = ? and user_id = ?`;

const isTrue = (v: unknown): boolean => v === true || v === 1 || v === 1n;

/** The columns of a delegation row the prediction reads. */
export interface DelegationState {
  readonly status: string;
  readonly expiresAt: Date;
  readonly spendingLimitCents: bigint;
  readonly amountSpentCents: bigint;
}

/**
 * What the charge's conditional UPDATE would refuse for `cents` (0: only the state, not the cap), judged from a
 * row read earlier; undefined when it would pass. A snapshot may be stale: this refuses early, the UPDATE decides.
 */
export function predictDelegationRefusal(d: DelegationState, cents: bigint, now: Date): RefusalCause | undefined {
  if (d.status === 'Revoked') return { reason: 'revoked' };
  if (d.status !== 'Active') return { reason: 'inactive' };
  if (d.expiresAt.getTime() <= now.getTime()) return { reason: 'expired' };
  if (d.amountSpentCents + cents > d.spendingLimitCents) {
    const remaining = d.spendingLimitCents - d.amountSpentCents;
    return { reason: 'over_cap', remainingCents: remaining > 0n ? remaining : 0n };
  }
  return undefined;
}

export const delegationKind: AccountKind<DelegationAccount> = {
  lockRank: 1,
  async charge(tx, a, cents, now) {
    return (await tx.run(CHARGE, [cents, a.id, a.userId, now, cents])) === 1;
  },
  async giveBack(tx, a, cents) {
    return (await tx.run(GIVE_BACK, [cents, a.id, a.userId, cents])) === 1;
  },
  async journal(tx, a, e, now) {
    const id = uuidv7();
    await tx.run(JOURNAL, [id, a.id, e.kind, e.amountCents, e.reference, e.description, now]);
    return id;
  },
  async whyRefused(tx, a, _cents, now) {
    const [row] = await tx.all(WHY, [now, a.id, a.userId]);
    if (row === undefined) return { reason: 'not_found' };
    if (row.status === 'Revoked') return { reason: 'revoked' };
    if (row.status !== 'Active') return { reason: 'inactive' };
    if (!isTrue(row.live)) return { reason: 'expired' };
    const remaining = int64(row.remaining);
    return { reason: 'over_cap', remainingCents: remaining > 0n ? remaining : 0n };
  },
};
