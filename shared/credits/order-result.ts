// What an order answers, and its refusal for a short wallet: shared by the ledger's order (order.ts), the chain's
// (chain-order.ts) and the card's (card-order.ts).
import { AppError } from '../errors/app-error.js';
import { fromColumn, sum, toWire } from '../money.js';
import type { PlanRow } from './lookup.js';

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

/** The refusal of a wallet that cannot pay the plan's price. */
export function walletShortError(buyer: string, plan: PlanRow): AppError {
  const amountPaid = sum(plan.amounts.map((a) => fromColumn(a)));
  return new AppError('BCK.PAYMENT.0001', {
    details: `wallet ${buyer} holds less than ${amountPaid} of ${plan.tokenAddress}`,
    params: {
      planId: String(plan.id),
      amount: toWire(amountPaid),
      asset: plan.tokenAddress,
    },
  });
}
