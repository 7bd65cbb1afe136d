// The rpc backend's reconciler (admin process, every CHAIN_RECONCILE_INTERVAL_MS): the chain decides what was paid.
// For each open merchant-leg reservation it reads the token's authorizationState(payer, nonce) at the newest block:
//   used   -> the payment is Settled, with the transaction found from the token's AuthorizationUsed event, and its
//             reservation is spent in that block (it leaves `reserved` once a balance read reflects the block);
//   unused, and that block's time has reached validBefore -> it can never be used (EIP-3009: a transfer needs
//             block.timestamp < validBefore): the payment is Expired, the reservation released, and the cap charge
//             (the fee leg's share too, unless its fee was collected) given back, exactly once: the reservation's
//             move off `open` in the same transaction is what makes it once, whichever process runs it.
import type { Hex } from 'viem';
import type { ServiceContext } from '../../shared/context.js';
import type { SqlTx } from '../../shared/db/sql.js';
import { giveBackCapIn } from '../../shared/router/cap-give-back.js';
import {
  expirePaymentIn,
  expiringPaymentIn,
  releaseFeeStatusIn,
  settleOnChainIn,
} from '../../shared/router/payment-store.js';
import type { ChainClient } from '../../shared/settlement/chain/client.js';
import {
  feeReservationId,
  markSpentIn,
  openRouterLegsIn,
  releaseReservationIn,
} from '../../shared/settlement/chain/reservations.js';

export interface ReconcileResult {
  settled: number;
  expired: number;
}

/** One pass over up to `max` open merchant legs, oldest first. */
export async function reconcileOnce(ctx: ServiceContext, chain: ChainClient, max = 200): Promise<ReconcileResult> {
  const legs = await ctx.db.sql.transaction((tx) => openRouterLegsIn(tx, max));
  const result: ReconcileResult = { settled: 0, expired: 0 };
  if (legs.length === 0) return result;
  const latest = await chain.latestBlock();
  for (const leg of legs) {
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
  await settleOnChainIn(tx, id, spent.txHash?.toLowerCase() ?? null, now);
  return true;
}

async function expireIn(tx: SqlTx, id: string, now: Date): Promise<boolean> {
  if (!(await releaseReservationIn(tx, id, now))) return false;
  const p = await expiringPaymentIn(tx, id);
  if (p === undefined) return true;
  await expirePaymentIn(tx, id, now);
  // The fee leg goes with the payment it was a fee on, unless the operator collected it already.
  const feeUncollected = (p.feeStatus === 'reserved' || p.feeStatus === 'settled') && (p.feeTxHash ?? '') === '';
  // The fee's share left the cap already if the leg was released before.
  let cents = p.feeStatus === 'released' ? p.capChargedCents - p.feeCents : p.capChargedCents;
  if (feeUncollected) {
    await releaseFeeStatusIn(tx, id, now);
    await releaseReservationIn(tx, feeReservationId(id), now);
  } else if (p.feeStatus === 'settled') cents -= p.feeCents;
  await giveBackCapIn(
    tx,
    {
      paymentId: id,
      delegationId: p.delegationId,
      userId: p.userId,
      cents,
      description: 'authorization expired unused',
    },
    now,
  );
  return true;
}
