// The statements on plan_order (through the entity manager) and chain_order (hand SQL). A chain order's moves out
// of `submitting` are conditional UPDATEs whose row count decides, each in one transaction with what it implies:
// paid -> its legs spent, the credits minted, the plan_order row; failed -> its legs released.
import type { Hex } from 'viem';
import { PlanOrder } from '../../db/entities/index.js';
import type { Dialect, Em } from '../../db/orm.js';
import { type SqlRow, type SqlTx, emSql, int64 } from '../../db/sql.js';
import { InvariantError } from '../../errors/invariant.js';
import { markSpentIn, releaseReservationIn } from '../../settlement/chain/reservations.js';
import { mintLot } from './lots.js';

export interface NewPlanOrder {
  readonly id: string;
  readonly planId: number;
  readonly buyerUserId: string;
  readonly buyerAddress: string;
  readonly asset: string;
  readonly amountPaid: bigint;
  readonly credits: bigint;
  readonly txId: string | null;
  readonly createdAt: Date;
}

/** Records a paid order inside the caller's transaction (after or before its lot: the caller's order). */
export async function insertPlanOrder(tx: Em, order: NewPlanOrder): Promise<void> {
  await tx.insert(PlanOrder, {
    id: order.id,
    planId: order.planId,
    buyerUserId: order.buyerUserId,
    buyerAddress: order.buyerAddress,
    asset: order.asset,
    amountPaid: order.amountPaid,
    credits: order.credits,
    txId: order.txId,
    createdAt: order.createdAt,
  });
}

export interface NewChainOrder {
  readonly id: string;
  readonly planId: number;
  readonly buyerUserId: string;
  readonly holderAddress: string;
  readonly payerAddress: string;
  readonly asset: string;
  readonly amountPaid: bigint;
  readonly credits: bigint;
}

/** The order row, `submitting`, inside the transaction that reserves its legs. */
export async function insertChainOrderIn(tx: SqlTx, order: NewChainOrder, now: Date): Promise<void> {
  await tx.run(
    `insert into chain_order (id, plan_id, buyer_user_id, holder_address, payer_address, asset, amount_paid, credits, status, tx_hash, failure_reason, created_at, updated_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, 'submitting', null, null, ?, ?)`,
    [
      order.id,
      String(order.planId),
      order.buyerUserId,
      order.holderAddress,
      order.payerAddress,
      order.asset,
      order.amountPaid,
      order.credits,
      now,
      now,
    ],
  );
}

/**
 * `submitting` -> `paid` inside the caller's transaction, once: the legs spent in the transaction's block, the
 * credits minted and the order recorded. False if the order was no longer `submitting` (finished by someone else).
 */
export async function completeChainOrderIn(
  em: Em,
  dialect: Dialect,
  orderId: string,
  legIds: readonly string[],
  mined: { txHash: Hex; blockNumber: bigint },
  now: Date,
): Promise<boolean> {
  const sql = emSql(em, dialect);
  const moved = await sql.run(
    "update chain_order set status = 'paid', tx_hash = ?, updated_at = ? where id = ? and status = 'submitting'",
    [mined.txHash.toLowerCase(), now, orderId],
  );
  if (moved !== 1) return false;
  const [o] = await sql.all(
    'select plan_id, buyer_user_id, holder_address, asset, amount_paid, credits from chain_order where id = ?',
    [orderId],
  );
  if (o === undefined) throw new InvariantError(`chain order ${orderId} vanished`);
  for (const id of legIds) await markSpentIn(sql, id, { block: mined.blockNumber, txHash: mined.txHash }, now);
  const planId = Number(o.plan_id);
  const holderAddress = String(o.holder_address);
  await mintLot(
    em,
    { planId, holderAddress, amount: int64(o.credits), expiresAt: null, kind: 'order', reference: orderId },
    now,
  );
  await insertPlanOrder(em, {
    id: orderId,
    planId,
    buyerUserId: String(o.buyer_user_id),
    buyerAddress: holderAddress,
    asset: String(o.asset),
    amountPaid: int64(o.amount_paid),
    credits: int64(o.credits),
    txId: mined.txHash.toLowerCase(),
    createdAt: now,
  });
  return true;
}

/** `submitting` -> `failed` inside the caller's transaction, once: nothing moved on chain, the legs released. */
export async function failChainOrderIn(
  tx: SqlTx,
  orderId: string,
  legIds: readonly string[],
  reason: string,
  txHash: Hex | undefined,
  now: Date,
): Promise<void> {
  const moved = await tx.run(
    "update chain_order set status = 'failed', failure_reason = ?, tx_hash = ?, updated_at = ? where id = ? and status = 'submitting'",
    [reason.slice(0, 500), txHash?.toLowerCase() ?? null, now, orderId],
  );
  if (moved !== 1) return;
  for (const id of legIds) await releaseReservationIn(tx, id, now);
}

/** Orders still `submitting` that were created before `before`, oldest first. */
export async function submittingChainOrdersIn(tx: SqlTx, before: Date, max: number): Promise<SqlRow[]> {
  return tx.all(
    `select id, payer_address, asset from chain_order where status = 'submitting' and created_at < ? order by created_at limit ${max}`,
    [before],
  );
}
