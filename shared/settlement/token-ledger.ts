// The sandbox settlement backend (ledger mode): an internal double-entry token ledger per
// (address, asset). Every movement is a conditional UPDATE on the payer (balance >= amount, affected rows
// checked) plus an upsert on the payee, and two append-only journal rows whose deltas sum to zero.
import { uuidv7 } from '../ids.js';
import type { ServiceContext } from '../context.js';
import { type SqlTx, type SqlValue, emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { MAX_INT64, fromColumn } from '../money.js';

/** Counter-account of faucet credits: it may go negative, so the journal still sums to zero. */
export const FAUCET_ACCOUNT = 'faucet';

/**
 * Prefix of the sandbox card processor's pseudo-accounts (`card:<delegationId>`, shared/settlement/card-processor.ts):
 * like the faucet they may go negative, since the card network, not this ledger, holds the money.
 */
export const CARD_ACCOUNT_PREFIX = 'card:';

export interface Movement {
  readonly from: string;
  readonly to: string;
  readonly asset: string;
  readonly amount: bigint;
  readonly kind: string;
  readonly reference?: string | undefined;
}

export class InsufficientFunds extends Error {
  constructor(
    readonly address: string,
    readonly asset: string,
  ) {
    super('insufficient funds');
  }
}

async function debit(tx: SqlTx, address: string, asset: string, amount: bigint, now: Date): Promise<void> {
  if (address === FAUCET_ACCOUNT || address.startsWith(CARD_ACCOUNT_PREFIX)) {
    await credit(tx, address, asset, -amount, now);
    return;
  }
  const n = await tx.run(
    'update token_balance set balance = balance - ?, updated_at = ? where address = ? and asset = ? and balance >= ?',
    [amount, now, address, asset, amount],
  );
  if (n !== 1) throw new InsufficientFunds(address, asset);
}

/** Refuses unless `address` holds at least `amount` (a conditional no-op UPDATE, so it also locks the row). */
async function requireBalance(tx: SqlTx, address: string, asset: string, amount: bigint): Promise<void> {
  const n = await tx.run(
    'update token_balance set balance = balance where address = ? and asset = ? and balance >= ?',
    [address, asset, amount],
  );
  if (n !== 1) throw new InsufficientFunds(address, asset);
}

/**
 * Adds `amount` (negative for the faucet and card pseudo-accounts) to a balance. The ON CONFLICT branch refuses a
 * sum outside the 64-bit range instead of letting it overflow (PostgreSQL: an error, a 500; SQLite: silently a
 * float). The bound is computed on the side that cannot overflow, inside a CASE so only that side is evaluated.
 */
async function credit(tx: SqlTx, address: string, asset: string, amount: bigint, now: Date): Promise<void> {
  const n = await tx.run(
    `insert into token_balance (address, asset, balance, updated_at) values (?, ?, ?, ?)
     on conflict (address, asset) do update set balance = token_balance.balance + excluded.balance, updated_at = excluded.updated_at
     where case when excluded.balance >= 0 then token_balance.balance <= ${MAX_INT64} - excluded.balance
                else token_balance.balance >= -${MAX_INT64} - excluded.balance end`,
    [address, asset, amount, now],
  );
  if (n !== 1)
    throw new AppError('BCK.HTTP.0400', { details: `the balance of ${address} would leave the 64-bit range` });
}

const JOURNAL_COLUMNS =
  'insert into token_ledger (id, tx_id, address, asset, delta, kind, reference, created_at) values ';
const JOURNAL_ROW = '(?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * Applies movements inside the caller's transaction; throws InsufficientFunds (the caller's transaction then
 * rolls back everything). Balances are changed in address order (PostgreSQL row locks), so A->B and B->A at
 * once cannot deadlock; a payer's several legs are ONE conditional debit of their sum. The journal gets two
 * rows per movement, whose deltas sum to zero, in one statement.
 */
export async function applyMovements(tx: SqlTx, movements: readonly Movement[], now: Date): Promise<string> {
  const txId = uuidv7();
  const legs = movements.filter((m) => m.amount > 0n);
  const changes = new Map<string, { address: string; asset: string; delta: bigint; self: bigint }>();
  const change = (address: string, asset: string, delta: bigint, self = 0n) => {
    const k = `${address}\u0000${asset}`;
    const c = changes.get(k);
    if (c === undefined) changes.set(k, { address, asset, delta, self });
    else {
      c.delta += delta;
      c.self += self;
    }
  };
  for (const m of legs) {
    // A payment to oneself nets to zero, so no debit would check it: it still needs the balance (an on-chain
    // transfer of more than the payer holds reverts, self-transfer or not). Pseudo-accounts may go negative.
    const self =
      m.from === m.to && m.from !== FAUCET_ACCOUNT && !m.from.startsWith(CARD_ACCOUNT_PREFIX) ? m.amount : 0n;
    change(m.from, m.asset, -m.amount, self);
    change(m.to, m.asset, m.amount);
  }
  const ordered = [...changes.values()].sort((a, b) =>
    a.address < b.address ? -1 : a.address > b.address ? 1 : a.asset < b.asset ? -1 : 1,
  );
  // Every row is touched at its place in address order (the self-payment check too), so PostgreSQL row locks are
  // always taken in one order and two transactions cannot deadlock.
  for (const c of ordered) {
    if (c.self > 0n) await requireBalance(tx, c.address, c.asset, c.self);
    if (c.delta < 0n) await debit(tx, c.address, c.asset, -c.delta, now);
    else if (c.delta > 0n) await credit(tx, c.address, c.asset, c.delta, now);
  }
  if (legs.length > 0) {
    const params: SqlValue[] = [];
    for (const m of legs) {
      const reference = m.reference ?? null;
      params.push(uuidv7(), txId, m.from, m.asset, -m.amount, m.kind, reference, now);
      params.push(uuidv7(), txId, m.to, m.asset, m.amount, m.kind, reference, now);
    }
    await tx.run(
      JOURNAL_COLUMNS +
        Array(legs.length * 2)
          .fill(JOURNAL_ROW)
          .join(', '),
      params,
    );
  }
  return txId;
}

/**
 * Gives a router payment's merchant leg back to the buyer, inside the caller's transaction: the reverse of the
 * `router` movement the ledger made when the router signed (shared/settlement/backend.ts), as kind
 * `router_refund`. The payee's debit is conditional like every other: a payee that has spent it (a payroute wallet)
 * throws InsufficientFunds and the caller's transaction rolls back. Resolves false when the payment moved nothing.
 */
export async function refundMerchantLegIn(tx: SqlTx, paymentId: string, now: Date): Promise<boolean> {
  const rows = await tx.all(
    `select address, asset, cast(delta as text) as delta from token_ledger where reference = ? and kind = 'router'`,
    [paymentId],
  );
  const from = rows.find((r) => fromColumn(r.delta) < 0n);
  const to = rows.find((r) => fromColumn(r.delta) > 0n);
  if (from === undefined || to === undefined) return false;
  await applyMovements(
    tx,
    [
      {
        from: String(to.address),
        to: String(from.address),
        asset: String(from.asset),
        amount: fromColumn(to.delta),
        kind: 'router_refund',
        reference: paymentId,
      },
    ],
    now,
  );
  return true;
}

export async function faucet(
  ctx: ServiceContext,
  address: string,
  asset: string,
  amount: bigint,
): Promise<{ txId: string; balance: bigint }> {
  const txId = await ctx.db.sql.transaction((tx) =>
    applyMovements(tx, [{ from: FAUCET_ACCOUNT, to: address, asset, amount, kind: 'faucet' }], ctx.now()),
  );
  return { txId, balance: await balanceOf(ctx, address, asset) };
}

export async function balanceOf(ctx: ServiceContext, address: string, asset: string): Promise<bigint> {
  // Hand SQL like every other statement on token_balance; cast: better-sqlite3 reads BIGINT as a lossy number.
  const [row] = await emSql(ctx.db.em(), ctx.db.dialect).all(
    'select cast(balance as text) as balance from token_balance where address = ? and asset = ?',
    [address, asset],
  );
  return row === undefined ? 0n : fromColumn(row.balance);
}
