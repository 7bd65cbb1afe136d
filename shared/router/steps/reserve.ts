// Step "reserve", the one transaction of an issuance: the payment row (the durable claim), the cap charge on the
// delegation and the settlement backend's backing of the legs. Shared by mode A, mode B and the streaming proxy;
// takes the priced leg and its signature, calls no other step.
import { uuidv7 } from '../../ids.js';
import type { Asset } from '../../assets.js';
import { type RouterPrincipal, payerColumnsOf, requestScopeOf } from '../principal.js';
import type { InferEntity } from '@mikro-orm/core';
import type { FeeStatus, RouterPayment } from '../../db/entities/index.js';
import type { DelegationRow } from '../delegation-snapshot.js';
import { isUniqueViolation } from '../../db/sql.js';
import { AppError } from '../../errors/app-error.js';
import type { TransferAuthorization } from '../../protocols/eip3009.js';
import type { PaymentChoice, SignedPayment } from '../../protocols/payment.js';
import type { PaymentLegs } from '../../settlement/backend.js';
import { InsufficientFunds } from '../../settlement/token-ledger.js';
import { SpendRefused, delegationAccount, reserveIn, spendRefusalError } from '../../spend/index.js';
import type { RouterServices } from '../services.js';
import type { ClaimHandle } from '../request-claims.js';
import type { Payer } from '../payer.js';
import { groupBudgetForSpendIn } from '../../organizations/spending.js';
import { countPaid } from '../../metrics/payments.js';
import type { Fees } from '../fees.js';
import { duplicateOf } from '../payment-duplicates.js';
import { insertPaymentIn } from '../payment-store.js';

export interface PayRequest {
  readonly principal: RouterPrincipal;
  readonly delegation: DelegationRow;
  /** The wallet that pays (payer.ts): the user's, or the organization wallet the delegation names. */
  readonly payer: Payer;
  readonly choice: PaymentChoice;
  readonly mode: 'credential' | 'route' | 'proxy';
  readonly requestId: string | undefined;
  readonly resourceUrl: string | undefined;
  /** The in-process claim: told the paymentId once the issuance transaction committed. */
  readonly claim?: ClaimHandle | undefined;
}

export interface IssuedPayment {
  readonly paymentId: string;
  /** The address that paid: its balance backs the fee leg later too. */
  readonly buyer: string;
  readonly signed: SignedPayment;
  readonly fees: Fees;
  readonly row: InferEntity<typeof RouterPayment>;
}

/**
 * Steps 6-7 as ONE transaction: the payment row (the durable claim, unique (user, requestId)), the cap charge on
 * the delegation, and the settlement backend's backing of the legs: in the ledger, the buyer's conditional debit
 * of the merchant leg (and mode A's fee leg); on chain, their reservation against the buyer's balance. Anything refused rolls all of it back, so the claim is given back and the requestId may be retried.
 * The signature needs nothing from the database, so it was made first (sign.ts) and is dropped unsent if the write
 * is refused.
 */
export async function reserve(
  services: RouterServices,
  req: PayRequest,
  priced: {
    /** The priced leg (price.ts). */
    readonly leg: {
      readonly amount: bigint;
      readonly recipient: string;
      readonly asset: Asset;
      readonly network: string;
      readonly scheme: string;
      readonly amountRaw: string;
    };
    readonly fees: Fees;
    readonly feeNow: boolean;
  },
  signing: { readonly authorization: TransferAuthorization; readonly signed: SignedPayment },
): Promise<IssuedPayment> {
  const { ctx } = services;
  const { leg, fees, feeNow } = priced;
  const { signed } = signing;
  const paymentId = uuidv7();
  const buyer = req.payer.address;
  const feeStatus: FeeStatus = feeNow ? 'settled' : fees.feeAmount > 0n ? 'reserved' : 'none';
  const row = {
    id: paymentId,
    userId: req.principal.userId,
    ...payerColumnsOf(req.principal),
    requestId: req.requestId ?? null,
    delegationId: req.delegation.id,
    mode: req.mode,
    protocol: req.choice.type,
    x402Version: req.choice.type === 'x402' ? req.choice.version : null,
    status: 'Issued' as const,
    scheme: leg.scheme,
    network: leg.network,
    asset: leg.asset.address,
    recipient: leg.recipient,
    amount: leg.amount,
    amountRaw: leg.amountRaw.slice(0, 100),
    approxCents: fees.approxCents,
    feeBps: fees.bps,
    feeAmount: fees.feeAmount,
    feeCents: fees.feeCents,
    capChargedCents: fees.capChargedCents,
    feeRecipient: fees.feeAmount > 0n ? services.feeRecipient : null,
    feeStatus,
    resourceUrl: req.resourceUrl?.slice(0, 2048) ?? null,
    txHash: null,
    failureReason: null,
    authNonce: signing.authorization.nonce,
    feeTxHash: null,
  };
  // The settlement backend backs the authorization: the ledger moves the merchant leg now, the chain reserves it.
  const legs: PaymentLegs = {
    paymentId,
    buyer,
    asset: leg.asset.address,
    merchant: { recipient: leg.recipient, amount: leg.amount },
    authorization: { nonce: signing.authorization.nonce, validBefore: signing.authorization.validBefore },
    fee: fees.feeAmount > 0n ? { recipient: services.feeRecipient, amount: fees.feeAmount, now: feeNow } : undefined,
  };
  const now = ctx.now();
  const delegationCharge = {
    account: delegationAccount(req.delegation.id, req.principal.userId),
    amountCents: fees.capChargedCents,
  };
  const description = `router ${req.mode} ${req.choice.type}`;
  const organization = req.payer.organization;
  try {
    await ctx.db.sql.transaction(
      async (tx) => {
        // The unique (user, requestId) key is the durable claim: another process's insert waits for our outcome.
        // In-process duplicates learn this paymentId only once it committed (claim.spent below): a refusal below
        // rolls the row back, and they must not be told of a payment that never existed.
        await insertPaymentIn(tx, row, now);
        // An organization wallet pays only while the organization allows it (checked and locked here, in the
        // spend's transaction), and the group's budget in the delegation's currency is charged with the cap.
        const budget =
          organization === undefined
            ? undefined
            : await groupBudgetForSpendIn(tx, { ...organization, currency: req.delegation.currency });
        const charges =
          budget === undefined
            ? [delegationCharge]
            : [{ account: budget, amountCents: fees.capChargedCents }, delegationCharge];
        // The caps are charged before the balance: a charge they could not take anyway is a 0003. A refusal
        // (SpendRefused) or a short wallet (InsufficientFunds) leaves the transaction and rolls it back.
        await reserveIn(tx, { charges, reference: paymentId, description }, now);
        await services.settlement.backPaymentIn(tx, legs, now);
      },
      { serializeOn: buyer },
    ); // the buyer's balance and delegation rows: every payment of theirs locks them
  } catch (err) {
    if (isUniqueViolation(err))
      throw await duplicateOf(
        ctx,
        req.principal.userId,
        requestScopeOf(req.principal),
        req.requestId,
        row.authNonce,
        err,
      );
    if (err instanceof SpendRefused) throw spendRefusalError(err);
    if (err instanceof InsufficientFunds)
      throw new AppError('BCK.ROUTER.0009', { details: `wallet ${buyer} holds too little ${leg.asset.symbol}` });
    throw err;
  }
  req.claim?.spent(paymentId);
  countPaid(leg.asset.address, leg.amount, feeNow ? fees.feeAmount : 0n);
  return { paymentId, buyer, signed, fees, row: { ...row, createdAt: now, updatedAt: now } };
}
