// Buying one order of the plan for a settle whose credits fall short, INSIDE the settle's transaction (settle.ts),
// after its claim row: the cap reservation, the payment, the plan_order row and the credit lot then commit with
// the burn or not at all, and a duplicate settle in any process waits on the claim instead of buying again.
//   1. predict (funding.ts) what the reservation cannot know: the delegation's currency, plan and recipients;
//   2. reserve the price in cents on the permission's delegation through the spend module (its conditional UPDATE
//      decides: revoked, expired or over the cap is refused);
//   3. pay: svc:erc4337 from the owner's custodial wallet through the settlement backend; svc:card-delegation
//      through the card-processor port (settlement/card-processor.ts says how it composes with the transaction);
//   4. record the order and mint the plan's credits to the owner.
// A payment that fails after the reservation gives the reservation back in the same transaction, so the
// delegation's journal shows the attempt and its release and the cap is whole again.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/index.js';
import type { PlanRow } from '../credits/lookup.js';
import { mintLot } from '../credits/lots.js';
import { buyPlanIn, walletShortError } from '../credits/order.js';
import { Delegation, PlanOrder } from '../db/entities/index.js';
import type { Dialect, Em } from '../db/orm.js';
import { type SqlTx, emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { type CardProcessor, fiatAssetOf } from '../settlement/card-processor.js';
import { InsufficientFunds } from '../settlement/token-ledger.js';
import { SpendRefused, type Spend, delegationAccount, fiatCurrencyOf, releaseIn, reserveIn } from '../spend/index.js';
import { type PlanPrice, delegationCanPay, planPrice } from './funding.js';
import type { PermissionRow } from './permissions.js';

/**
 * `refused` with `released`: a reservation was made and given back in this transaction, and the caller commits
 * them (its claim aside). Without `released` nothing needs keeping and the caller rolls back: after a SpendRefused
 * that is required, since an earlier charge of the same spend may stand.
 */
export type AutoOrder = { type: 'ordered'; orderId: string } | { type: 'refused'; reason: string; released: boolean };

export interface OrderTx {
  readonly tx: Em;
  readonly dialect: Dialect;
  readonly now: Date;
}

/** What failed while paying an order that was reserved: given back, and named in the settle's 402. */
class PaymentFailed extends Error {}

export async function orderAgainstDelegationIn(
  { tx, dialect, now }: OrderTx,
  permission: PermissionRow,
  plan: PlanRow,
  environment: Config['ENVIRONMENT'],
  cards: CardProcessor,
  /** The same for every repeat of this purchase: the card processor's idempotency key. */
  purchaseKey: string,
): Promise<AutoOrder> {
  if (permission.delegationId == null)
    return { type: 'refused', reason: 'the permission names no delegation', released: false };
  const delegation = await tx.findOne(Delegation, { id: permission.delegationId, userId: permission.userId });
  if (delegation === null) return { type: 'refused', reason: 'delegation not found', released: false };
  const price = planPrice(plan, environment);
  const fundable = delegationCanPay(delegation, plan, price, now);
  if (fundable.type === 'unfundable') return { type: 'refused', reason: fundable.reason, released: false };
  const sql = emSql(tx, dialect);
  const orderId = randomUUID();
  const spend: Spend = {
    charges:
      price.cents > 0n
        ? [{ account: delegationAccount(delegation.id, permission.userId), amountCents: price.cents }]
        : [],
    reference: orderId,
    description: `x402 auto-order of plan ${plan.id}`,
  };
  try {
    await reserveIn(sql, spend, now);
  } catch (err) {
    if (err instanceof SpendRefused) return { type: 'refused', reason: err.message, released: false };
    throw err;
  }
  try {
    if (permission.scheme === 'svc:card-delegation') {
      await payByCard(tx, sql, cards, { delegation, permission, plan, price, orderId, purchaseKey, now });
    } else {
      await payFromWallet(tx, dialect, permission, plan, orderId, now);
    }
    return { type: 'ordered', orderId };
  } catch (err) {
    if (!(err instanceof PaymentFailed)) throw err;
    if (spend.charges.length > 0) await releaseIn(sql, { ...spend, description: 'x402 auto-order failed' }, now);
    return { type: 'refused', reason: err.message, released: spend.charges.length > 0 };
  }
}

/**
 * svc:erc4337: the owner's custodial wallet pays through the settlement backend. In a savepoint, because a short
 * wallet is found only after some legs moved (the ledger takes balances in address order): rolling back to it
 * undoes them and keeps the reservation, which the caller then gives back.
 */
async function payFromWallet(
  tx: Em,
  dialect: Dialect,
  permission: PermissionRow,
  plan: PlanRow,
  orderId: string,
  now: Date,
): Promise<void> {
  const buyer = { userId: permission.userId, walletAddress: permission.ownerAddress };
  try {
    await tx.transactional((inner) => buyPlanIn(inner, dialect, buyer, plan, orderId, now));
  } catch (err) {
    if (err instanceof InsufficientFunds) throw new PaymentFailed(walletShortError(buyer.walletAddress, plan).details);
    if (err instanceof AppError) throw new PaymentFailed(err.details);
    throw err;
  }
}

/** svc:card-delegation: the card processor charges the price, then the order is recorded and the credits minted. */
async function payByCard(
  tx: Em,
  sql: SqlTx,
  cards: CardProcessor,
  o: {
    delegation: { id: string; provider: string; currency: string };
    permission: PermissionRow;
    plan: PlanRow;
    price: PlanPrice;
    orderId: string;
    purchaseKey: string;
    now: Date;
  },
): Promise<void> {
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
  await tx.insert(PlanOrder, {
    id: o.orderId,
    planId: o.plan.id,
    buyerUserId: o.permission.userId,
    buyerAddress: o.permission.ownerAddress,
    asset: fiatAssetOf(currency),
    amountPaid: o.price.cents,
    credits: o.plan.creditsAmount,
    txId: chargeId,
    createdAt: o.now,
  });
  await mintLot(
    tx,
    {
      planId: o.plan.id,
      holderAddress: o.permission.ownerAddress,
      amount: o.plan.creditsAmount,
      expiresAt: null,
      kind: 'order',
      reference: o.orderId,
    },
    o.now,
  );
}
