// The rpc backend's bookkeeping, all in the database so that every process sharing it agrees (no decision rests on
// one process's memory). The funds a wallet may still authorize are `balance - reserved` of its chain_balance row:
// `balance` is the token's balanceOf read at block `block`, and `reserved` sums the reservations that read does not
// reflect yet: `open` ones (authorized, not used on chain) and `spent` ones used in a later block. Each reservation
// leaves `reserved` exactly once: when a balance read at or after its block counts it (`reflected`), or when it can
// no longer be used (`released`). Every change locks the chain_balance row first (a conditional UPDATE), so the
// read of what a balance reflects and the change of `reserved` cannot interleave with another process's.
import { type Address, type Hex, getAddress } from 'viem';
import type { SqlRow, SqlTx, SqlValue } from '../../db/sql.js';
import { int64 } from '../../db/sql.js';
import { InsufficientFunds } from '../token-ledger.js';

/** The fee leg's reservation of a router payment (the merchant leg's is the payment id itself). */
export const feeReservationId = (paymentId: string): string => `${paymentId}:fee`;

export interface NewReservation {
  readonly id: string;
  readonly address: string;
  readonly asset: string;
  readonly amount: bigint;
  readonly kind: 'router' | 'router_fee' | 'order';
  readonly reference: string;
  readonly authNonce: string | null;
  readonly validBefore: bigint | null;
}

/** Takes the chain_balance row's lock (PostgreSQL row lock; SQLite's write lock is held already); false if absent. */
async function lockBalanceIn(tx: SqlTx, address: string, asset: string): Promise<boolean> {
  const n = await tx.run('update chain_balance set reserved = reserved where address = ? and asset = ?', [
    address,
    asset,
  ]);
  return n === 1;
}

async function balanceBlockIn(tx: SqlTx, address: string, asset: string): Promise<bigint> {
  const rows = await tx.all('select block from chain_balance where address = ? and asset = ?', [address, asset]);
  return rows[0] === undefined ? -1n : int64(rows[0].block);
}

/**
 * Records a balance read at `block`, unless a read of that block or a later one is recorded already. Reservations
 * spent at or before `block` are counted by this read, so they leave `reserved` in the same transaction.
 */
export async function recordBalanceReadIn(
  tx: SqlTx,
  read: { address: string; asset: string; balance: bigint; block: bigint },
  now: Date,
): Promise<boolean> {
  await tx.run(
    'insert into chain_balance (address, asset, balance, block, reserved, refreshed_at) values (?, ?, 0, -1, 0, ?) on conflict (address, asset) do nothing',
    [read.address, read.asset, now],
  );
  // The lock, and the guard against an older read overwriting a newer one (another process read later but wrote first).
  const newer = await tx.run(
    'update chain_balance set refreshed_at = ? where address = ? and asset = ? and block < ?',
    [now, read.address, read.asset, read.block],
  );
  if (newer !== 1) return false;
  const spent: SqlValue[] = [read.address, read.asset, read.block];
  const rows = await tx.all(
    "select coalesce(sum(amount), 0) as total from chain_reservation where address = ? and asset = ? and status = 'spent' and spent_block <= ?",
    spent,
  );
  const reflected = int64(rows[0]?.total ?? 0);
  if (reflected > 0n) {
    await tx.run(
      "update chain_reservation set status = 'reflected', updated_at = ? where address = ? and asset = ? and status = 'spent' and spent_block <= ?",
      [now, ...spent],
    );
  }
  await tx.run(
    'update chain_balance set balance = ?, block = ?, reserved = reserved - ? where address = ? and asset = ?',
    [read.balance, read.block, reflected, read.address, read.asset],
  );
  return true;
}

/**
 * Reserves `amounts` against the wallet's on-chain funds in the caller's transaction, as ONE conditional UPDATE of
 * their sum (affected rows checked), then one row per amount. Throws InsufficientFunds (the caller's transaction
 * then rolls back) when `balance - reserved` is short, or when the balance was never read.
 */
export async function reserveIn(tx: SqlTx, legs: readonly NewReservation[], now: Date): Promise<void> {
  const first = legs[0];
  if (first === undefined) return;
  const total = legs.reduce((sum, l) => sum + l.amount, 0n);
  const n = await tx.run(
    'update chain_balance set reserved = reserved + ? where address = ? and asset = ? and balance - reserved >= ?',
    [total, first.address, first.asset, total],
  );
  if (n !== 1) throw new InsufficientFunds(first.address, first.asset);
  const fromBlock = await balanceBlockIn(tx, first.address, first.asset);
  for (const l of legs) {
    await tx.run(
      `insert into chain_reservation (id, address, asset, amount, kind, reference, auth_nonce, valid_before, from_block, status, spent_block, tx_hash, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', null, null, ?, ?)`,
      [l.id, l.address, l.asset, l.amount, l.kind, l.reference, l.authNonce, l.validBefore, fromBlock, now, now],
    );
  }
}

interface ReservationRef {
  readonly id: string;
  readonly address: string;
  readonly asset: string;
}

/** An open reservation's wallet and token; undefined if it is not open (or does not exist: the ledger backend). */
async function openReservationIn(tx: SqlTx, id: string): Promise<ReservationRef | undefined> {
  const rows = await tx.all("select address, asset from chain_reservation where id = ? and status = 'open'", [id]);
  const row = rows[0];
  return row === undefined ? undefined : { id, address: String(row.address), asset: String(row.asset) };
}

/**
 * Marks an open reservation used on chain in `block` by `txHash`: it stays in `reserved` until a balance read at or
 * after that block is recorded (at once if the recorded read is that recent already). False if it was not open.
 */
export async function markSpentIn(
  tx: SqlTx,
  id: string,
  use: { block: bigint; txHash: string },
  now: Date,
): Promise<boolean> {
  const r = await openReservationIn(tx, id);
  if (r === undefined || !(await lockBalanceIn(tx, r.address, r.asset))) return false;
  const reflected = (await balanceBlockIn(tx, r.address, r.asset)) >= use.block;
  const n = await tx.run(
    "update chain_reservation set status = ?, spent_block = ?, tx_hash = ?, updated_at = ? where id = ? and status = 'open'",
    [reflected ? 'reflected' : 'spent', use.block, use.txHash, now, r.id],
  );
  if (n !== 1) return false;
  if (reflected) await leaveReservedIn(tx, r);
  return true;
}

/**
 * Releases an open reservation that can no longer be used (expired unused, or never signed away). False if it was
 * not open, or does not exist (the ledger backend keeps none), so callers need not know the backend.
 */
export async function releaseReservationIn(tx: SqlTx, id: string, now: Date): Promise<boolean> {
  const r = await openReservationIn(tx, id);
  if (r === undefined || !(await lockBalanceIn(tx, r.address, r.asset))) return false;
  const n = await tx.run(
    "update chain_reservation set status = 'released', updated_at = ? where id = ? and status = 'open'",
    [now, r.id],
  );
  if (n !== 1) return false;
  await leaveReservedIn(tx, r);
  return true;
}

async function leaveReservedIn(tx: SqlTx, r: ReservationRef): Promise<void> {
  const rows = await tx.all('select amount from chain_reservation where id = ?', [r.id]);
  const amount = int64(rows[0]?.amount ?? 0);
  await tx.run('update chain_balance set reserved = reserved - ? where address = ? and asset = ?', [
    amount,
    r.address,
    r.asset,
  ]);
}

/** The legs reserved for one payment or order (`reference`, `kind`), in id order: what a reconciler decides from. */
export async function legsOfIn(tx: SqlTx, reference: string, kind: NewReservation['kind']): Promise<SqlRow[]> {
  return tx.all(
    'select id, auth_nonce, valid_before, from_block from chain_reservation where reference = ? and kind = ? order by id',
    [reference, kind],
  );
}

/** What a wallet's reservations hold back of its last balance read (0 before its first read). */
export async function reservedOfIn(tx: SqlTx, address: string, asset: string): Promise<bigint> {
  const rows = await tx.all(
    'select cast(reserved as text) as reserved from chain_balance where address = ? and asset = ?',
    [address, asset],
  );
  return int64(rows[0]?.reserved ?? 0);
}

/** An open merchant leg of a router payment: the authorization the chain reconciler asks the token about. */
export interface OpenRouterLeg {
  readonly id: string;
  readonly address: Address;
  readonly asset: Address;
  readonly nonce: Hex;
  readonly validBefore: bigint;
  readonly fromBlock: bigint;
}

/** Up to `max` open merchant legs, oldest first. */
export async function openRouterLegsIn(tx: SqlTx, max: number): Promise<OpenRouterLeg[]> {
  const rows = await tx.all(
    `select id, address, asset, auth_nonce, valid_before, from_block from chain_reservation
     where status = 'open' and kind = 'router' order by created_at limit ${Number(max)}`,
  );
  return rows.map((r) => ({
    id: String(r.id),
    address: String(r.address) as Address,
    asset: String(r.asset) as Address,
    nonce: String(r.auth_nonce) as Hex,
    validBefore: int64(r.valid_before),
    fromBlock: int64(r.from_block),
  }));
}

/** A fee leg decided paid whose merchant leg the chain saw used, with what collecting it needs of its payment. */
export interface DueFee {
  readonly reservationId: string;
  readonly paymentId: string;
  readonly userId: string;
  readonly delegationId: string;
  readonly buyer: Address;
  readonly asset: Address;
  readonly recipient: Address;
  readonly amount: bigint;
  readonly feeCents: bigint;
  /** The transfer authorization an earlier run wrote before sending it, if any. */
  readonly nonce: Hex | null;
  readonly validBefore: bigint | null;
  readonly fromBlock: bigint;
}

/**
 * Up to `max` fee legs to collect, oldest first: open `router_fee` reservations whose payment's fee leg is settled
 * and not yet collected, and whose merchant leg was used on chain (a fee on a payment that never happened is never
 * taken). Reads router_payment beside this table's rows: the one statement here that joins it.
 */
export async function dueFeesIn(tx: SqlTx, max: number): Promise<DueFee[]> {
  const rows = await tx.all(
    `select f.id, f.reference, f.address, f.asset, f.amount, f.auth_nonce, f.valid_before, f.from_block,
            p.user_id, p.delegation_id, p.fee_recipient, p.fee_cents
     from chain_reservation f
     join router_payment p on p.id = f.reference
     join chain_reservation m on m.id = f.reference
     where f.status = 'open' and f.kind = 'router_fee' and p.fee_status = 'settled' and p.fee_tx_hash is null
       and m.status in ('spent', 'reflected')
     order by f.created_at limit ${Number(max)}`,
  );
  return rows.map((r) => ({
    reservationId: String(r.id),
    paymentId: String(r.reference),
    userId: String(r.user_id),
    delegationId: String(r.delegation_id),
    buyer: getAddress(String(r.address)),
    asset: getAddress(String(r.asset)),
    recipient: getAddress(String(r.fee_recipient)),
    amount: int64(r.amount),
    feeCents: int64(r.fee_cents),
    nonce: r.auth_nonce === null ? null : (String(r.auth_nonce) as Hex),
    validBefore: r.valid_before === null ? null : int64(r.valid_before),
    fromBlock: int64(r.from_block),
  }));
}

/**
 * Writes the fee transfer's authorization on its reservation BEFORE it is sent, so that a later run asks the token
 * whether it was used instead of signing a second one. False if another process took the leg meanwhile (it is no
 * longer open, or holds another authorization than `previousNonce`).
 */
export async function setFeeAuthorizationIn(
  tx: SqlTx,
  reservationId: string,
  auth: { nonce: Hex; validBefore: bigint; previousNonce: Hex | null },
  now: Date,
): Promise<boolean> {
  const n = await tx.run(
    "update chain_reservation set auth_nonce = ?, valid_before = ?, updated_at = ? where id = ? and status = 'open' and (auth_nonce is null or auth_nonce = ?)",
    [auth.nonce, auth.validBefore, now, reservationId, auth.previousNonce ?? ''],
  );
  return n === 1;
}

/** The wallet a reservation holds funds of; undefined when there is none (a payment written under the ledger backend). */
export async function reservationAddressIn(tx: SqlTx, id: string): Promise<string | undefined> {
  const [r] = await tx.all('select address from chain_reservation where id = ?', [id]);
  return r === undefined ? undefined : String(r.address);
}
