// The sandbox settlement backend (DESIGN §7, ledger mode): an internal double-entry token ledger per
// (address, asset). Every movement is a conditional UPDATE on the payer (balance >= amount, affected rows
// checked) plus an upsert on the payee, and two append-only journal rows whose deltas sum to zero.
import { randomUUID } from 'node:crypto';
import type { QueryResult } from '@mikro-orm/sql';
import type { ServiceContext } from '../context.js';
import { TokenBalance, TokenLedger } from '../db/entities/index.js';
import type { Em } from '../db/orm.js';

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
  constructor(readonly address: string, readonly asset: string) {
    super('insufficient funds');
  }
}

async function debit(tx: Em, address: string, asset: string, amount: bigint, now: Date): Promise<void> {
  if (address === FAUCET_ACCOUNT || address.startsWith(CARD_ACCOUNT_PREFIX)) {
    await credit(tx, address, asset, -amount, now);
    return;
  }
  const res = await tx.execute<QueryResult>(
    'update token_balance set balance = balance - ?, updated_at = ? where address = ? and asset = ? and balance >= ?',
    [amount, now, address, asset, amount],
    'run',
  );
  if (res.affectedRows !== 1) throw new InsufficientFunds(address, asset);
}

async function credit(tx: Em, address: string, asset: string, amount: bigint, now: Date): Promise<void> {
  await tx.execute(
    `insert into token_balance (address, asset, balance, updated_at) values (?, ?, ?, ?)
     on conflict (address, asset) do update set balance = token_balance.balance + excluded.balance, updated_at = excluded.updated_at`,
    [address, asset, amount, now],
    'run',
  );
}

/**
 * Applies movements inside the caller's transaction; throws InsufficientFunds (the caller's transaction then
 * rolls back everything). Both statements are writes, so an SQLite transaction's first statement is a write.
 */
export async function applyMovements(tx: Em, movements: readonly Movement[], now: Date): Promise<string> {
  const txId = randomUUID();
  for (const m of movements) {
    if (m.amount <= 0n) continue;
    // Rows are locked in address order (PostgreSQL), so A->B and B->A at once cannot deadlock.
    if (m.from <= m.to) {
      await debit(tx, m.from, m.asset, m.amount, now);
      await credit(tx, m.to, m.asset, m.amount, now);
    } else {
      await credit(tx, m.to, m.asset, m.amount, now);
      await debit(tx, m.from, m.asset, m.amount, now);
    }
    const reference = m.reference ?? null;
    await tx.insertMany(TokenLedger, [
      { id: randomUUID(), txId, address: m.from, asset: m.asset, delta: -m.amount, kind: m.kind, reference, createdAt: now },
      { id: randomUUID(), txId, address: m.to, asset: m.asset, delta: m.amount, kind: m.kind, reference, createdAt: now },
    ]);
  }
  return txId;
}

export async function faucet(
  ctx: ServiceContext,
  address: string,
  asset: string,
  amount: bigint,
): Promise<{ txId: string; balance: bigint }> {
  const txId = await ctx.db
    .em()
    .transactional((tx) =>
      applyMovements(tx, [{ from: FAUCET_ACCOUNT, to: address, asset, amount, kind: 'faucet' }], ctx.now()),
    );
  return { txId, balance: await balanceOf(ctx, address, asset) };
}

export async function balanceOf(ctx: ServiceContext, address: string, asset: string): Promise<bigint> {
  const row = await ctx.db.em().findOne(TokenBalance, { address, asset });
  return row?.balance ?? 0n;
}
