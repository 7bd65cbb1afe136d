// Buying one order of the plan for a settle whose credits fall short (DESIGN §6): reserve the price in cents on
// the permission's delegation (the conditional UPDATE decides: revoked, expired or over the cap is refused), then
//   - svc:erc4337: orderPlan for the owner (the custodial wallet pays through the settlement backend);
//   - svc:card-delegation: charge the card through the card processor, then mint the plan's credits.
// A failure before money moves releases the reservation, so a refused order never eats into the cap; once a card
// was charged the reservation stays, since it records money that moved.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { mintLot } from '../credits/lots.js';
import type { PlanRow } from '../credits/lookup.js';
import { orderPlan } from '../credits/order.js';
import { Delegation, PlanOrder } from '../db/entities/index.js';
import { release, reserve } from '../delegations/service.js';
import { AppError } from '../errors/app-error.js';
import { type CardProcessor, type ChargeResult, fiatAssetOf } from '../settlement/card-processor.js';
import { fiatCurrencyOf } from '../spend/index.js';
import { delegationCanPay, planPrice } from './funding.js';
import type { PermissionRow } from './permissions.js';

export type AutoOrder = { type: 'ordered'; orderId: string } | { type: 'refused'; reason: string };

export async function orderAgainstDelegation(
  ctx: ServiceContext,
  permission: PermissionRow,
  plan: PlanRow,
  cards: CardProcessor,
): Promise<AutoOrder> {
  if (permission.delegationId == null) return { type: 'refused', reason: 'the permission names no delegation' };
  const delegation = await ctx.db.em().findOne(Delegation, { id: permission.delegationId, userId: permission.userId });
  if (delegation === null) return { type: 'refused', reason: 'delegation not found' };
  const price = planPrice(plan, ctx.config.ENVIRONMENT);
  // Early refusal for what reserve does not know (currency, recipients); reserve decides the rest atomically.
  const fundable = delegationCanPay(delegation, plan, price, ctx.now());
  if (fundable.type === 'unfundable') return { type: 'refused', reason: fundable.reason };
  const orderRef = randomUUID();
  if (price.cents > 0n) {
    const reserved = await reserve(ctx, {
      delegationId: delegation.id,
      userId: permission.userId,
      amountCents: price.cents,
      planId: plan.id,
      reference: orderRef,
      description: `x402 auto-order of plan ${plan.id}`,
    });
    if (reserved.type === 'refused') return { type: 'refused', reason: reserved.reason };
  }
  const giveBack = async (): Promise<void> => {
    if (price.cents > 0n) {
      await release(ctx, {
        delegationId: delegation.id,
        userId: permission.userId,
        amountCents: price.cents,
        reference: orderRef,
        description: 'x402 auto-order failed',
      });
    }
  };
  if (permission.scheme === 'svc:card-delegation') {
    const currency = fiatCurrencyOf(delegation.currency);
    if (currency === undefined) {
      await giveBack();
      return { type: 'refused', reason: `a ${delegation.currency} delegation has no card currency` };
    }
    let chargeId: string | null = null;
    if (price.cents > 0n) {
      let charged: ChargeResult;
      try {
        charged = await cards.charge({
          delegationId: delegation.id,
          provider: delegation.provider,
          currency,
          cents: price.cents,
          payees: price.payees,
          reference: orderRef,
        });
      } catch (err) {
        await giveBack();
        throw err;
      }
      if (charged.type === 'declined') {
        await giveBack();
        return { type: 'refused', reason: `the card charge was declined: ${charged.reason}` };
      }
      chargeId = charged.chargeId;
    }
    // The card was charged: the reservation stays whatever happens next (it records money that moved).
    await mintCardOrder(ctx, permission, plan, { orderRef, currency, cents: price.cents, chargeId });
    return { type: 'ordered', orderId: orderRef };
  }
  try {
    const order = await orderPlan(
      ctx,
      { userId: permission.userId, walletAddress: permission.ownerAddress },
      String(plan.id),
    );
    return { type: 'ordered', orderId: order.orderId };
  } catch (err) {
    // orderPlan moves nothing unless it commits: give the cap back on any failure.
    await giveBack();
    if (err instanceof AppError) return { type: 'refused', reason: err.details };
    throw err;
  }
}

/** Records the card-paid order and mints the plan's credits to the owner, in one transaction. */
async function mintCardOrder(
  ctx: ServiceContext,
  permission: PermissionRow,
  plan: PlanRow,
  o: { orderRef: string; currency: string; cents: bigint; chargeId: string | null },
): Promise<void> {
  const now = ctx.now();
  await ctx.db.em().transactional(async (tx) => {
    await tx.insert(PlanOrder, {
      id: o.orderRef,
      planId: plan.id,
      buyerUserId: permission.userId,
      buyerAddress: permission.ownerAddress,
      asset: fiatAssetOf(o.currency),
      amountPaid: o.cents,
      credits: plan.creditsAmount,
      txId: o.chargeId,
      createdAt: now,
    });
    await mintLot(
      tx,
      {
        planId: plan.id,
        holderAddress: permission.ownerAddress,
        amount: plan.creditsAmount,
        expiresAt: null,
        kind: 'order',
        reference: o.orderRef,
      },
      now,
    );
  });
}
