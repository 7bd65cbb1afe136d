// Buying a plan with a card-backed delegation: the one card payment of an order (an x402 auto-order's and an
// account_access connector's POST /protocol/plans/{planId}/order), and that order itself. The price in cents is
// reserved on the delegation through the spend module, the sandbox card processor charges it, the order is
// recorded and the credits minted to the buyer's wallet: all in ONE transaction, so a refused cap or a declined
// card leaves nothing behind. The buyer's token balance never moves: the card pays, not the wallet.
import { randomUUID } from 'node:crypto';
import type { ActingUser } from '../auth/caller.js';
import type { ServiceContext } from '../context.js';
import { type SqlTx, emSql } from '../db/sql.js';
import type { Em } from '../db/orm.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { type CardProcessor, fiatAssetOf, sandboxCardProcessor } from '../settlement/card-processor.js';
import {
  SpendRefused,
  delegationAccount,
  fiatCurrencyOf,
  predictDelegationRefusal,
  refusalError,
  reserveIn,
  spendRefusalError,
} from '../spend/index.js';
import { FIAT_PROVIDERS } from '../delegations/requests.js';
import { findOwnDelegation } from '../delegations/store.js';
import { type PlanPrice, delegationCanPay, planPrice } from './funding.js';
import type { PlanRow } from './lookup.js';
import { planOr404 } from './lookup.js';
import { creditBalance, mintLot } from './store/lots.js';
import { insertPlanOrder } from './store/orders.js';
import { assertPurchasable } from './order.js';
import type { OrderResult } from './order-result.js';

/** What failed while paying an order whose cap was reserved: the caller gives the reservation back or rolls back. */
export class PaymentFailed extends Error {}

export interface CardPurchase {
  readonly buyer: ActingUser;
  readonly delegation: { readonly id: string; readonly provider: string; readonly currency: string };
  readonly plan: PlanRow;
  readonly price: PlanPrice;
  readonly orderId: string;
  /** The same for every repeat of this purchase: the card processor's idempotency key. */
  readonly purchaseKey: string;
  readonly now: Date;
}

/**
 * Charges the card the price (nothing for a free plan), then records the order and mints the plan's credits to
 * the buyer, inside the caller's transaction `tx`, after the caller reserved the price on the delegation. Throws
 * PaymentFailed (nothing written by this call) when the card cannot be charged. Resolves with the order's
 * asset (`fiat:<currency>`) and the charge id (null when nothing was charged).
 */
export async function payPlanByCardIn(
  tx: Em,
  sql: SqlTx,
  cards: CardProcessor,
  o: CardPurchase,
): Promise<{ asset: string; chargeId: string | null }> {
  const currency = fiatCurrencyOf(o.delegation.currency);
  if (currency === undefined) throw new PaymentFailed(`a ${o.delegation.currency} delegation has no card currency`);
  let chargeId: string | null = null;
  if (o.price.cents > 0n) {
    const charged = await cards.charge(
      sql,
      {
        delegationId: o.delegation.id,
        provider: o.delegation.provider,
        currency,
        cents: o.price.cents,
        payees: o.price.payees,
        reference: o.orderId,
        idempotencyKey: o.purchaseKey,
      },
      o.now,
    );
    if (charged.type === 'declined') throw new PaymentFailed(`the card charge was declined: ${charged.reason}`);
    chargeId = charged.chargeId;
  }
  const asset = fiatAssetOf(currency);
  await insertPlanOrder(tx, {
    id: o.orderId,
    planId: o.plan.id,
    buyerUserId: o.buyer.userId,
    buyerAddress: o.buyer.walletAddress,
    asset,
    amountPaid: o.price.cents,
    credits: o.plan.creditsAmount,
    txId: chargeId,
    createdAt: o.now,
  });
  await mintLot(
    tx,
    {
      planId: o.plan.id,
      holderAddress: o.buyer.walletAddress,
      amount: o.plan.creditsAmount,
      expiresAt: null,
      kind: 'order',
      reference: o.orderId,
    },
    o.now,
  );
  return { asset, chargeId };
}

/** The buyer of a card order: the user, and the card-backed delegation (an account_access grant's) that pays. */
export interface CardBuyer extends ActingUser {
  readonly delegationId: string;
}

/**
 * POST /protocol/plans/{planId}/order for a buyer paying with its card-backed delegation. The delegation's state
 * and cap are refused early from a snapshot (402 BCK.ROUTER.0003, as every spend refusal), but the reservation's
 * conditional UPDATE decides: N parallel orders against a cap that fits K commit exactly K.
 */
export async function orderPlanByCard(
  ctx: ServiceContext,
  buyer: CardBuyer,
  rawPlanId: string,
  cards: CardProcessor = sandboxCardProcessor(),
): Promise<OrderResult> {
  const em = ctx.db.em();
  const plan = await planOr404(em, rawPlanId);
  assertPurchasable(plan);
  const account = delegationAccount(buyer.delegationId, buyer.userId);
  const delegation = await findOwnDelegation(em, buyer.userId, buyer.delegationId);
  if (delegation === null) throw refusalError(account, { reason: 'not_found' });
  const now = ctx.now();
  const price = planPrice(plan, ctx.config.ENVIRONMENT);
  const refused = predictDelegationRefusal(delegation, price.cents, now);
  if (refused !== undefined) throw refusalError(account, refused);
  // What no cap can fix (a plan priced in a token the delegation's currency does not pay, say): nothing fundable.
  const fundable = (FIAT_PROVIDERS as readonly string[]).includes(delegation.provider)
    ? delegationCanPay(delegation, plan, price, now, buyer.walletAddress)
    : ({ type: 'unfundable', reason: `a ${delegation.provider} delegation cannot pay by card` } as const);
  if (fundable.type === 'unfundable') {
    throw new AppError('BCK.ROUTER.0001', {
      details: `plan ${plan.id} cannot be paid by card: ${fundable.reason}`,
      params: {
        planId: String(plan.id),
        delegationId: delegation.id,
      },
    });
  }
  const orderId = randomUUID();
  try {
    return await em.transactional(async (tx): Promise<OrderResult> => {
      const sql = emSql(tx, ctx.db.dialect);
      // First statement a write: the cap's conditional UPDATE (SQLite takes the write lock at once, so no
      // read-to-write upgrade can fail with "database is locked"). A free plan reserves nothing; its first
      // statement is then the order's INSERT.
      if (price.cents > 0n) {
        await reserveIn(
          sql,
          {
            charges: [{ account, amountCents: price.cents }],
            reference: orderId,
            description: `order of plan ${plan.id}`,
          },
          now,
        );
      }
      // Every attempt is a purchase of its own: an attempt that rolled back never captured its charge (a real
      // processor's hold lapses), and a retry under the same Idempotency-Key replays the committed answer.
      const paid = await payPlanByCardIn(tx, sql, cards, {
        buyer,
        delegation,
        plan,
        price,
        orderId,
        purchaseKey: `plan-order:${orderId}`,
        now,
      });
      const balance = await creditBalance(tx, plan.id, buyer.walletAddress, now);
      return {
        orderId,
        planId: String(plan.id),
        holderAddress: buyer.walletAddress,
        creditsGranted: toWire(plan.creditsAmount),
        amountPaid: toWire(price.cents),
        asset: paid.asset,
        txId: paid.chargeId,
        balance: toWire(balance),
      };
    });
  } catch (err) {
    if (err instanceof SpendRefused) throw spendRefusalError(err);
    if (err instanceof PaymentFailed) {
      throw new AppError('BCK.ROUTER.0001', {
        details: `plan ${plan.id} cannot be paid by card: ${err.message}`,
        params: {
          planId: String(plan.id),
          delegationId: delegation.id,
        },
      });
    }
    throw err;
  }
}
