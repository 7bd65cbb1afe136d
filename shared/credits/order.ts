// POST /protocol/plans/{planId}/order with the user's API key: the caller buys the plan (an account_access
// connector pays by card instead: card-order.ts). The price moves from the caller's custodial wallet to the
// receivers through the settlement backend (one movement per receiver), the credits are minted and the order
// recorded: all in ONE transaction, so a short wallet moves nothing at all. `buyPlanIn` is that transaction's
// work, also run inside the x402 settle's transaction by its auto-order.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import type { Dialect, Em } from '../db/orm.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { MAX_INT64, fromColumn, sum, toWire } from '../money.js';
import { InsufficientFunds, type Movement, applyMovements } from '../settlement/token-ledger.js';
import type { ActingUser } from '../auth/caller.js';
import { creditBalance, mintLot } from './store/lots.js';
import { insertPlanOrder } from './store/orders.js';
import { type OrderResult, walletShortError } from './order-result.js';
import { orderPlanOnChain } from './chain-order.js';
import { settlementOf } from '../settlement/backend.js';
import { type PlanRow, planOr404 } from './lookup.js';
import { InvariantError } from '../errors/invariant.js';

export interface BoughtPlan {
  readonly orderId: string;
  readonly amountPaid: bigint;
  readonly txId: string | null;
}

/**
 * Pays the plan's price from `payerAddress` (the buyer's wallet unless an organization wallet pays for the buyer),
 * mints its credits to the buyer and records the order, inside the caller's transaction `tx`. Throws
 * InsufficientFunds when the paying wallet is short, with some legs possibly applied: the caller rolls back (the
 * transaction, or a savepoint around this call).
 */
export async function buyPlanIn(
  tx: Em,
  dialect: Dialect,
  buyer: ActingUser,
  plan: PlanRow,
  orderId: string,
  now: Date,
  payerAddress: string = buyer.walletAddress,
): Promise<BoughtPlan> {
  const amounts = plan.amounts.map((a) => fromColumn(a));
  const amountPaid = sum(amounts);
  // The registry bounds each amount; the total must still fit the order's BIGINT column.
  if (amountPaid > MAX_INT64)
    throw new AppError('BCK.HTTP.0400', { details: `the price of plan ${plan.id} does not fit in a 64-bit integer` });
  const movements: Movement[] = amounts.map((amount, i) => ({
    from: payerAddress,
    to: plan.receivers[i] ?? '',
    asset: plan.tokenAddress,
    amount,
    kind: 'order',
    reference: orderId,
  }));
  if (movements.some((m) => m.to === '')) throw new InvariantError(`plan ${plan.id} has fewer receivers than amounts`);
  // First statement a write: the conditional debit of the buyer (SQLite takes the write lock at once).
  const txId = amountPaid > 0n ? await applyMovements(emSql(tx, dialect), movements, now) : null;
  await mintLot(
    tx,
    {
      planId: plan.id,
      holderAddress: buyer.walletAddress,
      amount: plan.creditsAmount,
      expiresAt: null,
      kind: 'order',
      reference: orderId,
    },
    now,
  );
  await insertPlanOrder(tx, {
    id: orderId,
    planId: plan.id,
    buyerUserId: buyer.userId,
    buyerAddress: buyer.walletAddress,
    asset: plan.tokenAddress,
    amountPaid,
    credits: plan.creditsAmount,
    txId,
    createdAt: now,
  });
  return { orderId, amountPaid, txId };
}

/** Interface, listing-flag table: an unlisted plan cannot be purchased, by anyone, however it would be paid. */
export function assertPurchasable(plan: PlanRow): void {
  if (!plan.listed) {
    throw new AppError('BCK.PROTOCOL.0062', {
      details: `plan ${plan.id} is unlisted and cannot be purchased`,
      params: {
        planId: String(plan.id),
      },
    });
  }
}

export async function orderPlan(ctx: ServiceContext, caller: ActingUser, rawPlanId: string): Promise<OrderResult> {
  const plan = await planOr404(ctx.db.em(), rawPlanId);
  assertPurchasable(plan);
  // On chain the wallet's money is the token's: the order is paid there (chain-order.ts). A free plan moves nothing.
  if (ctx.config.settlement.backend === 'rpc' && plan.amounts.some((a) => fromColumn(a) > 0n))
    return orderPlanOnChain(ctx, settlementOf(ctx), caller, plan);
  const now = ctx.now();
  try {
    return await ctx.db.em().transactional(async (tx) => {
      const bought = await buyPlanIn(tx, ctx.db.dialect, caller, plan, randomUUID(), now);
      const balance = await creditBalance(tx, plan.id, caller.walletAddress, now);
      return {
        orderId: bought.orderId,
        planId: String(plan.id),
        holderAddress: caller.walletAddress,
        creditsGranted: toWire(plan.creditsAmount),
        amountPaid: toWire(bought.amountPaid),
        asset: plan.tokenAddress,
        txId: bought.txId,
        balance: toWire(balance),
      };
    });
  } catch (err) {
    if (err instanceof InsufficientFunds) throw walletShortError(caller.walletAddress, plan);
    throw err;
  }
}
