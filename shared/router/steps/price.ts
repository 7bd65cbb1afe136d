// Step "price": the leg a choice pays (amount, payee, asset), the operator's fee on it and the checks no payment
// may pass (the delegation's currency, the payee). Plain values in, plain values out: nothing is written or signed.
import type { DelegationRow } from '../delegation-snapshot.js';
import { AppError } from '../../errors/app-error.js';
import { payeeRefusal } from '../../protocols/payee.js';
import type { PaymentChoice } from '../../protocols/payment.js';
import { currencyPays } from '../../spend/index.js';
import type { RouterServices } from '../services.js';
import type { Payer } from '../payer.js';
import { type Fees, computeFees } from '../fees.js';

/** Amount and recipient of a choice, before signing. */
function legOf(choice: PaymentChoice) {
  if (choice.type === 'x402') {
    return {
      amount: choice.choice.amount,
      recipient: choice.choice.payTo,
      asset: choice.choice.asset,
      network: String(choice.choice.option.network),
      scheme: 'exact',
      amountRaw: String(choice.choice.option.amount ?? choice.choice.option.maxAmountRequired ?? choice.choice.amount),
    };
  }
  return {
    amount: choice.choice.amount,
    recipient: choice.choice.recipient,
    asset: choice.choice.asset,
    network: `eip155:${choice.choice.chainId}`,
    scheme: 'charge',
    amountRaw: choice.choice.amount.toString(),
  };
}

export type Leg = ReturnType<typeof legOf>;

export interface Priced {
  readonly leg: Leg;
  readonly fees: Fees;
  /** Mode A's fee leg moves with the merchant leg; mode B's waits for the merchant's answer. */
  readonly feeNow: boolean;
}

export function priceLeg(
  services: RouterServices,
  req: {
    readonly delegation: DelegationRow;
    readonly payer: Payer;
    readonly choice: PaymentChoice;
    readonly mode: 'credential' | 'route' | 'proxy';
    readonly requestId: string | undefined;
  },
): Priced {
  const { ctx } = services;
  const leg = legOf(req.choice);
  if (!currencyPays(req.delegation.currency, leg.asset.symbol)) {
    throw new AppError('BCK.ROUTER.0001', {
      details: `a ${req.delegation.currency} delegation cannot pay ${leg.asset.symbol}`,
    });
  }
  // Choosing refuses these already; checked again here, before anything is signed or written, because a payment
  // to the zero address or to the buyer itself is money lost whichever path asked for it.
  const payee = payeeRefusal(leg.recipient, req.payer.address, req.payer.organization?.memberWallet);
  if (payee !== undefined)
    throw new AppError('BCK.ROUTER.0001', { details: payee.detail, params: { reason: payee.reason } });
  // Mode A collects a fee only when requestId is given (router-modea.test.ts "x402 without requestId"); MPP pays
  // the merchant leg only (a challenge is one authorization to one recipient: there is no second leg to sign).
  const chargeFee = req.choice.type === 'x402' && (req.mode !== 'credential' || req.requestId !== undefined);
  const fees = computeFees(leg.amount, ctx.config.ROUTER_FEE_BPS, chargeFee);
  // Mode A's fee leg moves with the merchant leg (there is no later answer to wait for); mode B's waits for one.
  const feeNow = req.mode === 'credential' && fees.feeAmount > 0n;
  return { leg, fees, feeNow };
}
