// The two cap operations as SQL inside the caller's transaction (DESIGN §4): ONE conditional UPDATE whose
// affected-row count decides, plus an append-only delegation_transaction row. Shared by `reserve`/`release`
// (service.ts) and the router's issuance transaction (shared/router/issue.ts).
import { uuidv7 } from '../ids.js';
import type { SqlTx } from '../db/sql.js';

export interface CapCharge {
  readonly delegationId: string;
  readonly amountCents: bigint;
  readonly reference?: string | null | undefined;
  readonly description?: string | null | undefined;
}

const INSERT_TRANSACTION =
  'insert into delegation_transaction (id, delegation_id, kind, amount_cents, reference, description, created_at) values (?, ?, ?, ?, ?, ?, ?)';

/**
 * Draws `amountCents` from the cap of the owner's delegation if it is Active, unexpired and the charge fits.
 * Returns the transaction id, or null when the UPDATE matched no row (the caller rolls back nothing else).
 */
export async function reserveIn(tx: SqlTx, c: CapCharge & { userId: string }, now: Date): Promise<string | null> {
  const n = await tx.run(
    `update delegation set amount_spent_cents = amount_spent_cents + ?, transaction_count = transaction_count + 1
     where id = ? and user_id = ? and status = 'Active' and expires_at > ? and (amount_spent_cents + ? <= spending_limit_cents)`,
    [c.amountCents, c.delegationId, c.userId, now, c.amountCents],
  );
  if (n !== 1) return null;
  const id = uuidv7();
  await tx.run(INSERT_TRANSACTION, [
    id,
    c.delegationId,
    'reserve',
    c.amountCents,
    c.reference ?? null,
    c.description ?? null,
    now,
  ]);
  return id;
}

/** Gives back a reserved amount; never more than was spent. False when nothing was released. */
export async function releaseIn(tx: SqlTx, c: CapCharge, now: Date): Promise<boolean> {
  const n = await tx.run(
    'update delegation set amount_spent_cents = amount_spent_cents - ? where id = ? and (amount_spent_cents >= ?)',
    [c.amountCents, c.delegationId, c.amountCents],
  );
  if (n !== 1) return false;
  await tx.run(INSERT_TRANSACTION, [
    uuidv7(),
    c.delegationId,
    'release',
    -c.amountCents,
    c.reference ?? null,
    c.description ?? null,
    now,
  ]);
  return true;
}
