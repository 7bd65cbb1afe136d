// The rpc backend's reconciler (admin process, every CHAIN_RECONCILE_INTERVAL_MS): the chain decides what was paid.
// For each open merchant-leg reservation it reads the token's authorizationState(payer, nonce) at the newest block:
//   used   -> the payment is Settled, with the transaction found from the token's AuthorizationUsed event, and its
//             reservation is spent in that block (it leaves `reserved` once a balance read reflects the block);
//   unused, and that block's time has reached validBefore -> it can never be used (EIP-3009: a transfer needs
//             block.timestamp < validBefore): the payment is Expired, the reservation released, and the cap charge
//             (the fee leg's share too, unless its fee was collected) given back, exactly once: the reservation's
//             move off `open` in the same transaction is what makes it once, whichever process runs it.
import type { Address, Hex } from 'viem';
import type { ServiceContext } from '../context.js';
import type { SqlTx } from '../db/sql.js';
import { int64 } from '../db/sql.js';
import type { ChainClient } from '../settlement/chain/client.js';
import { feeReservationId, markSpentIn, releaseReservationIn } from '../settlement/chain/reservations.js';
import { giveBackCapIn } from './cap-give-back.js';

interface OpenLeg {
  id: string;
  address: Address;
  asset: Address;
  nonce: Hex;
  validBefore: bigint;
  fromBlock: bigint;
}

export interface ReconcileResult {
  settled: number;
  expired: number;
}

/** One pass over up to `max` open merchant legs, oldest first. */
export async function reconcileOnce(ctx: ServiceContext, chain: ChainClient, max = 200): Promise<ReconcileResult> {
  const rows = await ctx.db.sql.transaction((tx) =>
    tx.all(
      `select id, address, asset, auth_nonce, valid_before, from_block from chain_reservation
       where status = 'open' and kind = 'router' order by created_at limit ${max}`,
    ),
  );
  const result: ReconcileResult = { settled: 0, expired: 0 };
  if (rows.length === 0) return result;
  const latest = await chain.latestBlock();
  for (const r of rows) {
    const leg: OpenLeg = {
      id: String(r.id),
      address: String(r.address) as Address,
      asset: String(r.asset) as Address,
      nonce: String(r.auth_nonce) as Hex,
      validBefore: int64(r.valid_before),
      fromBlock: int64(r.from_block),
    };
    if (await chain.authorizationUsed(leg.asset, leg.address, leg.nonce, latest.number)) {
      const from = leg.fromBlock < 0n ? 0n : leg.fromBlock;
      const use = await chain.findAuthorizationUse(leg.asset, leg.address, leg.nonce, from, latest.number);
      // Not found in the range (a node that pruned its logs): the newest block is a safe upper bound for when it was spent.
      const spent = { block: use?.blockNumber ?? latest.number, txHash: use?.txHash ?? null };
      if (await ctx.db.sql.transaction((tx) => settleIn(tx, leg.id, spent, ctx.now()), { serializeOn: leg.address }))
        result.settled += 1;
    } else if (latest.timestamp >= leg.validBefore) {
      if (await ctx.db.sql.transaction((tx) => expireIn(tx, leg.id, ctx.now()), { serializeOn: leg.address }))
        result.expired += 1;
    }
  }
  return result;
}

async function settleIn(tx: SqlTx, id: string, spent: { block: bigint; txHash: Hex | null }, now: Date) {
  if (!(await markSpentIn(tx, id, { block: spent.block, txHash: spent.txHash ?? '' }, now))) return false;
  // The chain's transaction replaces whatever a merchant's receipt claimed; Failed too (the merchant refused the
  // call but collected the authorization anyway: it was paid).
  await tx.run(
    "update router_payment set status = 'Settled', tx_hash = coalesce(?, tx_hash), updated_at = ? where id = ? and status in ('Issued', 'Failed', 'Settled')",
    [spent.txHash?.toLowerCase() ?? null, now, id],
  );
  return true;
}

async function expireIn(tx: SqlTx, id: string, now: Date): Promise<boolean> {
  if (!(await releaseReservationIn(tx, id, now))) return false;
  const [p] = await tx.all(
    'select user_id, delegation_id, cap_charged_cents, fee_cents, fee_status, fee_tx_hash from router_payment where id = ?',
    [id],
  );
  if (p === undefined) return true;
  await tx.run("update router_payment set status = 'Expired', updated_at = ? where id = ?", [now, id]);
  // The fee leg goes with the payment it was a fee on, unless the operator collected it already.
  const feeUncollected =
    (p.fee_status === 'reserved' || p.fee_status === 'settled') && (p.fee_tx_hash === null || p.fee_tx_hash === '');
  const feeCents = int64(p.fee_cents);
  const capCents = int64(p.cap_charged_cents);
  // The fee's share left the cap already if the leg was released before.
  let cents = p.fee_status === 'released' ? capCents - feeCents : capCents;
  if (feeUncollected) {
    await tx.run("update router_payment set fee_status = 'released', updated_at = ? where id = ?", [now, id]);
    await releaseReservationIn(tx, feeReservationId(id), now);
  } else if (p.fee_status === 'settled') cents -= feeCents;
  await giveBackCapIn(
    tx,
    {
      paymentId: id,
      delegationId: String(p.delegation_id),
      userId: String(p.user_id),
      cents,
      description: 'authorization expired unused',
    },
    now,
  );
  return true;
}
