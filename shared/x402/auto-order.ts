// Buying one order of the plan for a settle whose credits fall short, INSIDE the settle's transaction (settle.ts),
// after its claim row: the cap reservation, the payment, the plan_order row and the credit lot then commit with
// the burn or not at all, and a duplicate settle in any process waits on the claim instead of buying again.
//   1. predict (credits/funding.ts) what the reservation cannot know: the delegation's currency, plan and recipients;
//   2. reserve the price in cents on the permission's delegation through the spend module (its conditional UPDATE
//      decides: revoked, expired or over the cap is refused);
//   3. pay: svc:erc4337 from the owner's custodial wallet (or the organization wallet the delegation names, whose
//      group budget is then charged with the cap) through the settlement backend; svc:card-delegation
//      through the card-processor port, as an account_access connector's order (credits/card-order.ts;
//      settlement/card-processor.ts says how it composes with the transaction);
//   4. record the order and mint the plan's credits to the owner.
// A payment that fails after the reservation gives the reservation back in the same transaction, so the
// delegation's journal shows the attempt and its release and the cap is whole again.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/index.js';
import { PaymentFailed, payPlanByCardIn } from '../credits/card-order.js';
import type { PlanRow } from '../credits/lookup.js';
import { buyPlanIn } from '../credits/order.js';
import { walletShortError } from '../credits/order-result.js';
import type { Dialect, Em } from '../db/orm.js';
import { emSql } from '../db/sql.js';
import { findOwnDelegation } from '../delegations/store.js';
import { AppError } from '../errors/app-error.js';
import type { CardProcessor } from '../settlement/card-processor.js';
import { InsufficientFunds } from '../settlement/token-ledger.js';
import { orgOrderPayerIn } from '../organizations/spending.js';
import {
  type GroupBudgetAccount,
  SpendRefused,
  type Spend,
  delegationAccount,
  releaseIn,
  reserveIn,
} from '../spend/index.js';
import { delegationCanPay, planPrice } from '../credits/funding.js';
import type { PermissionRow } from './store.js';
import { InvariantError } from '../errors/invariant.js';

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

export async function orderAgainstDelegationIn(
  { tx, dialect, now }: OrderTx,
  permission: PermissionRow,
  plan: PlanRow,
  config: Pick<Config, 'ENVIRONMENT' | 'settlement'>,
  cards: CardProcessor,
  /** The same for every repeat of this purchase: the card processor's idempotency key. */
  purchaseKey: string,
): Promise<AutoOrder> {
  if (permission.delegationId == null)
    return { type: 'refused', reason: 'the permission names no delegation', released: false };
  const delegation = await findOwnDelegation(tx, permission.userId, permission.delegationId);
  if (delegation === null) return { type: 'refused', reason: 'delegation not found', released: false };
  const price = planPrice(plan, config.ENVIRONMENT);
  const fundable = delegationCanPay(delegation, plan, price, now, permission.ownerAddress);
  if (fundable.type === 'unfundable') return { type: 'refused', reason: fundable.reason, released: false };
  const sql = emSql(tx, dialect);
  const orderId = randomUUID();
  // An organization wallet pays only while the organization allows it, checked and locked here in the settle's
  // transaction, and its group's budget is charged with the cap, first (the spend module's lock order).
  let payer: { address: string; budget?: GroupBudgetAccount } = { address: permission.ownerAddress };
  if (delegation.orgWalletId != null) {
    // Creation always names the group; a row without one must never fall back to the member's own wallet.
    if (delegation.groupId == null) throw new InvariantError(`delegation ${delegation.id} names a wallet but no group`);
    const org = { orgWalletId: delegation.orgWalletId, groupId: delegation.groupId, currency: delegation.currency };
    try {
      payer = await orgOrderPayerIn(sql, org, permission.userId);
    } catch (err) {
      if (err instanceof AppError) return { type: 'refused', reason: err.details, released: false };
      throw err;
    }
  }
  const charged = (account: Spend['charges'][number]['account']) => ({ account, amountCents: price.cents });
  const spend: Spend = {
    charges:
      price.cents > 0n
        ? [
            ...(payer.budget === undefined ? [] : [charged(payer.budget)]),
            charged(delegationAccount(delegation.id, permission.userId)),
          ]
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
      const buyer = { userId: permission.userId, walletAddress: permission.ownerAddress };
      await payPlanByCardIn(tx, sql, cards, { buyer, delegation, plan, price, orderId, purchaseKey, now });
    } else {
      if (config.settlement.backend === 'rpc' && price.atomic > 0n) throw new PaymentFailed(WALLET_ORDERS_OFF_CHAIN);
      await payFromWallet(tx, dialect, permission, payer.address, plan, orderId, now);
    }
    return { type: 'ordered', orderId };
  } catch (err) {
    if (!(err instanceof PaymentFailed)) throw err;
    if (spend.charges.length > 0) await releaseIn(sql, { ...spend, description: 'x402 auto-order failed' }, now);
    return { type: 'refused', reason: err.message, released: spend.charges.length > 0 };
  }
}

/**
 * The auto-order runs inside the x402 settle's database transaction (the burn and the order commit together), where
 * nothing may wait on a chain: with SETTLEMENT_BACKEND=rpc a wallet does not auto-order. The agent is answered 402
 * BCK.CREDITS.0003 with this reason; the buyer orders the plan first (POST /protocol/plans/{planId}/order, paid on
 * chain), or pays by card (svc:card-delegation).
 */
const WALLET_ORDERS_OFF_CHAIN =
  'a wallet does not auto-order on chain (SETTLEMENT_BACKEND=rpc): order the plan first, or pay by card';

/**
 * svc:erc4337: `payerAddress` pays through the settlement backend: the owner's custodial wallet, or the
 * organization wallet of the delegation; the credits go to the owner either way. In a savepoint, because a short
 * wallet is found only after some legs moved (the ledger takes balances in address order): rolling back to it
 * undoes them and keeps the reservation, which the caller then gives back.
 */
async function payFromWallet(
  tx: Em,
  dialect: Dialect,
  permission: PermissionRow,
  payerAddress: string,
  plan: PlanRow,
  orderId: string,
  now: Date,
): Promise<void> {
  const buyer = { userId: permission.userId, walletAddress: permission.ownerAddress };
  try {
    await tx.transactional((inner) => buyPlanIn(inner, dialect, buyer, plan, orderId, now, payerAddress));
  } catch (err) {
    if (err instanceof InsufficientFunds) throw new PaymentFailed(walletShortError(payerAddress, plan).details);
    if (err instanceof AppError) throw new PaymentFailed(err.details);
    throw err;
  }
}
