// POST /protocol/plans/{planId}/order: the caller buys the plan (DESIGN §5). The price moves from the caller's
// custodial wallet to the receivers through the settlement backend (one movement per receiver), the credits are
// minted and the order recorded: all in ONE transaction, so a short wallet moves nothing at all.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { PlanOrder } from '../db/entities/index.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { MAX_INT64, fromColumn, sum, toWire } from '../money.js';
import { InsufficientFunds, type Movement, applyMovements } from '../settlement/token-ledger.js';
import type { ActingUser } from '../auth/caller.js';
import { creditBalance, mintLot } from './lots.js';
import { planOr404 } from './lookup.js';

export interface OrderResult {
  orderId: string;
  planId: string;
  holderAddress: string;
  creditsGranted: string;
  amountPaid: string;
  asset: string;
  /** Settlement transaction of the payment; null when the plan is free (nothing moved). */
  txId: string | null;
  balance: string;
}

export async function orderPlan(ctx: ServiceContext, caller: ActingUser, rawPlanId: string): Promise<OrderResult> {
  const plan = await planOr404(ctx.db.em(), rawPlanId);
  // Interface, listing-flag table: an unlisted plan cannot be purchased, by anyone.
  if (!plan.listed) {
    throw new AppError('BCK.PROTOCOL.0062', `plan ${plan.id} is unlisted and cannot be purchased`, {
      planId: String(plan.id),
    });
  }
  const amounts = plan.amounts.map((a) => fromColumn(a));
  const amountPaid = sum(amounts);
  // The registry bounds each amount; the total must still fit the order's BIGINT column.
  if (amountPaid > MAX_INT64)
    throw new AppError('BCK.HTTP.0400', `the price of plan ${plan.id} does not fit in a 64-bit integer`);
  const buyer = caller.walletAddress;
  const orderId = randomUUID();
  const now = ctx.now();
  const movements: Movement[] = amounts.map((amount, i) => ({
    from: buyer,
    to: plan.receivers[i] ?? '',
    asset: plan.tokenAddress,
    amount,
    kind: 'order',
    reference: orderId,
  }));
  if (movements.some((m) => m.to === '')) throw new Error(`plan ${plan.id} has fewer receivers than amounts`);
  try {
    return await ctx.db.em().transactional(async (tx) => {
      // First statement a write: the conditional debit of the buyer (SQLite takes the write lock at once).
      const txId = amountPaid > 0n ? await applyMovements(emSql(tx, ctx.db.dialect), movements, now) : null;
      await mintLot(
        tx,
        {
          planId: plan.id,
          holderAddress: buyer,
          amount: plan.creditsAmount,
          expiresAt: null,
          kind: 'order',
          reference: orderId,
        },
        now,
      );
      await tx.insert(PlanOrder, {
        id: orderId,
        planId: plan.id,
        buyerUserId: caller.userId,
        buyerAddress: buyer,
        asset: plan.tokenAddress,
        amountPaid,
        credits: plan.creditsAmount,
        txId,
        createdAt: now,
      });
      const balance = await creditBalance(tx, plan.id, buyer, now);
      return {
        orderId,
        planId: String(plan.id),
        holderAddress: buyer,
        creditsGranted: toWire(plan.creditsAmount),
        amountPaid: toWire(amountPaid),
        asset: plan.tokenAddress,
        txId,
        balance: toWire(balance),
      };
    });
  } catch (err) {
    if (err instanceof InsufficientFunds) {
      throw new AppError('BCK.PAYMENT.0001', `wallet ${buyer} holds less than ${amountPaid} of ${plan.tokenAddress}`, {
        planId: String(plan.id),
        amount: toWire(amountPaid),
        asset: plan.tokenAddress,
      });
    }
    throw err;
  }
}
