// One paid leg, shared by mode A (issue a credential), mode B (route) and the streaming proxy: durable claim, cap
// reservation, ledger backing, signature; then, once the merchant answered, the outcome.
import { uuidv7 } from '../../ids.js';
import { type RouterPrincipal, payerColumnsOf, requestScopeOf } from '../principal.js';
import type { InferEntity } from '@mikro-orm/core';
import { bytesToHex } from 'viem';
import type { FeeStatus, RouterPayment } from '../../db/entities/index.js';
import type { DelegationRow } from '../delegation-snapshot.js';
import { type SqlTx, isUniqueViolation } from '../../db/sql.js';
import { AppError } from '../../errors/app-error.js';
import { keyBytes } from '../../protocols/eip3009.js';
import { payeeRefusal } from '../../protocols/payee.js';
import { type PaymentChoice, type SignedPayment, preparePayment } from '../../protocols/payment.js';
import type { PaymentLegs } from '../../settlement/backend.js';
import { ChainUnavailable } from '../../settlement/chain/client.js';
import { chainUnavailableError } from '../../settlement/chain/errors.js';
import { InsufficientFunds } from '../../settlement/token-ledger.js';
import { SpendRefused, currencyPays, delegationAccount, reserveIn, spendRefusalError } from '../../spend/index.js';
import type { RouterServices } from '../services.js';
import type { ClaimHandle } from '../request-claims.js';
import type { Payer } from '../payer.js';
import { groupBudgetForSpendIn } from '../../organizations/spending.js';
import { countFeePaid, countPaid } from '../../metrics/payments.js';
import { type Fees, computeFees } from '../fees.js';
import { duplicateOf } from '../payment-duplicates.js';
import { insertPaymentIn, paymentStatusOf, resolveFeeIn, updatePaymentIn } from '../payment-store.js';
import { releaseFeeLegIn } from '../cap-give-back.js';

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

/**
 * Steps 6-7 as ONE transaction: the payment row (the durable claim, unique (user, requestId)), the cap charge on
 * the delegation, and the settlement backend's backing of the legs: in the ledger, the buyer's conditional debit
 * of the merchant leg (and mode A's fee leg); on chain, their reservation against the buyer's balance. Anything refused rolls all of it back, so the claim is given back and the requestId may be retried.
 * The signature needs nothing from the database, so it is made first and dropped unsent if the write is refused.
 */
export async function issuePayment(services: RouterServices, req: PayRequest): Promise<IssuedPayment> {
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
  const paymentId = uuidv7();
  const buyer = req.payer.address;
  // x402: validBefore at most ROUTER_MAX_AUTH_TTL_SECS away (a leaked credential stays spendable no longer).
  const unsigned = preparePayment(req.choice, buyer, { maxAuthTtlSeconds: ctx.config.ROUTER_MAX_AUTH_TTL_SECS });
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
    authNonce: unsigned.authorization.nonce,
    feeTxHash: null,
  };
  // Before signing and outside the transaction: with the rpc backend this may read the buyer's balance on chain.
  await services.settlement.prepare(buyer, leg.asset.address).catch((err: unknown) => {
    throw err instanceof ChainUnavailable ? chainUnavailableError(err) : err;
  });
  const key = keyBytes(await req.payer.key());
  const signed = unsigned.finish(bytesToHex(await services.signer.sign(unsigned.typed, key)));

  // The settlement backend backs the authorization: the ledger moves the merchant leg now, the chain reserves it.
  const legs: PaymentLegs = {
    paymentId,
    buyer,
    asset: leg.asset.address,
    merchant: { recipient: leg.recipient, amount: leg.amount },
    authorization: { nonce: unsigned.authorization.nonce, validBefore: unsigned.authorization.validBefore },
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

export type PaidOutcome =
  | { type: 'settled'; txHash: string | undefined }
  | { type: 'issued' }
  | { type: 'rejected'; reason: string };

/**
 * Moves a reserved fee leg once, inside the caller's transaction: settled (the buyer pays the fee recipient) or
 * released (its cap share given back). Whoever moves fee_status off `reserved` moves the money; false if it
 * was no longer reserved. Throws InsufficientFunds when the buyer cannot pay a settled leg.
 */
async function resolveFeeLegIn(
  tx: SqlTx,
  services: RouterServices,
  issued: IssuedPayment,
  buyer: string,
  settle: boolean,
  now: Date,
): Promise<boolean> {
  const { row, fees } = issued;
  if (row.feeStatus !== 'reserved') return false;
  if (!settle) {
    return releaseFeeLegIn(
      tx,
      {
        paymentId: row.id,
        delegationId: row.delegationId,
        userId: row.userId,
        feeCents: fees.feeCents,
        description: 'fee leg not settled',
      },
      now,
    );
  }
  if (!(await resolveFeeIn(tx, row.id, 'settled', now))) return false;
  await services.settlement.settleFeeIn(
    tx,
    { paymentId: row.id, buyer, asset: row.asset, recipient: services.feeRecipient, amount: fees.feeAmount },
    now,
  );
  return true;
}

/**
 * Runs `attempt(true)` (the fee leg settled) and, when the buyer's balance no longer covers the fee, `attempt(false)`
 * (released instead; the merchant leg stands). A settle that is not attempted runs once.
 */
async function feeOrRelease<T>(settle: boolean, attempt: (settle: boolean) => Promise<T>): Promise<T> {
  try {
    return await attempt(settle);
  } catch (err) {
    if (!(settle && err instanceof InsufficientFunds)) throw err;
    return attempt(false);
  }
}

/**
 * Settles (`settle`) or releases a fee leg left reserved by finishPayment's `feeAfterBody`, once the streamed
 * answer ended: settled when its whole body reached the caller, released when it broke off.
 */
export async function finishFeeLeg(
  services: RouterServices,
  issued: IssuedPayment,
  buyer: string,
  settle: boolean,
): Promise<void> {
  const { ctx } = services;
  const paid = await feeOrRelease(settle, async (s) => {
    const moved = await ctx.db.sql.transaction((tx) => resolveFeeLegIn(tx, services, issued, buyer, s, ctx.now()), {
      serializeOn: buyer,
    });
    return moved && s;
  });
  if (paid) countFeePaid(issued.row.asset, issued.fees.feeAmount);
}

/**
 * Step 8, after the merchant answered the paid call: a receipt settles it; another 402 fails it and releases the
 * fee leg; no (or a malformed) receipt leaves it Issued. The fee leg settles only on a 2xx answer; with
 * `feeAfterBody` (the streaming proxy) a 2xx leaves it reserved, for finishFeeLeg once the body was relayed:
 * `feeDeferred` says so. The merchant leg is never released once sent.
 */
export async function finishPayment(
  services: RouterServices,
  issued: IssuedPayment,
  answer: { status: number; outcome: PaidOutcome },
  buyer: string,
  opts: { feeAfterBody?: boolean } = {},
): Promise<{ status: string; txHash: string | null; feeDeferred: boolean }> {
  const { ctx } = services;
  const { row } = issued;
  const o = answer.outcome;
  const status = o.type === 'settled' ? 'Settled' : o.type === 'rejected' ? 'Failed' : 'Issued';
  const txHash = o.type === 'settled' ? (o.txHash ?? null) : null;
  const failureReason = o.type === 'rejected' ? o.reason.slice(0, 500) : null;
  const now = ctx.now();
  const ok = answer.status >= 200 && answer.status < 300;
  const feeDeferred = ok && opts.feeAfterBody === true && row.feeStatus === 'reserved';
  // One transaction: the fee leg settles (2xx) or its cap share is released, once, and the status moves from
  // Issued. A payment its caller recorded /settled meanwhile keeps that status; its fee leg is still resolved.
  // `feePaid`: this call settled the fee leg (counted once the transaction committed, never for a rolled-back try).
  let feePaid = false;
  const settle = async (tryFee: boolean): Promise<boolean> =>
    ctx.db.sql.transaction(
      async (tx) => {
        if (!feeDeferred) feePaid = (await resolveFeeLegIn(tx, services, issued, buyer, tryFee, now)) && tryFee;
        return updatePaymentIn(tx, row.id, 'Issued', { status, txHash, failureReason }, now);
      },
      { serializeOn: buyer },
    );
  const moved = await feeOrRelease(ok, settle);
  if (feePaid) countFeePaid(row.asset, issued.fees.feeAmount);
  if (!moved) {
    const current = await paymentStatusOf(ctx, row.id);
    return { status: current?.status ?? status, txHash: current?.txHash ?? null, feeDeferred };
  }
  return { status, txHash, feeDeferred };
}
