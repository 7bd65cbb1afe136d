// One paid leg, shared by mode A (mint a credential), mode B (route) and the streaming proxy (DESIGN §7 steps
// 6-8): durable claim, cap reservation, ledger backing, signature; then, once the merchant answered, the outcome.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../accounts/api-keys.js';
import type { InferEntity } from '@mikro-orm/core';
import { Delegation, type RouterPayment } from '../db/entities/index.js';
import { effectiveStatus } from '../delegations/records.js';
import { release, reserve } from '../delegations/service.js';
import { AppError } from '../errors/app-error.js';
import { type PaymentChoice, type PaymentCredential, buildPaymentCredential } from '../protocols/payment.js';
import { InsufficientFunds, type Movement, applyMovements, balanceOf } from '../settlement/token-ledger.js';
import type { RouterContext } from './context.js';
import { type Fees, computeFees } from './fees.js';
import { claimPayment, dropClaim, duplicateError, setPaymentStatus } from './payments.js';

export type DelegationRow = InferEntity<typeof Delegation>;

export interface PayRequest {
  readonly principal: Principal;
  readonly delegation: DelegationRow;
  readonly choice: PaymentChoice;
  readonly mode: 'credential' | 'route' | 'proxy';
  readonly requestId: string | undefined;
  readonly resourceUrl: string | undefined;
  /** Told the paymentId once the durable claim is in (in-process duplicates can then name it). */
  readonly onClaimed?: ((paymentId: string) => void) | undefined;
}

export interface IssuedPayment {
  readonly paymentId: string;
  readonly credential: PaymentCredential;
  readonly fees: Fees;
  readonly row: InferEntity<typeof RouterPayment>;
}

/** Amount and recipient of a choice, before signing. */
function legOf(choice: PaymentChoice) {
  if (choice.type === 'x402') {
    return { amount: choice.choice.amount, recipient: choice.choice.payTo, asset: choice.choice.asset, network: String(choice.choice.option.network), scheme: 'exact', amountRaw: String(choice.choice.option.amount ?? choice.choice.option.maxAmountRequired ?? choice.choice.amount) };
  }
  return { amount: choice.choice.amount, recipient: choice.choice.recipient, asset: choice.choice.asset, network: `eip155:${choice.choice.chainId}`, scheme: 'charge', amountRaw: choice.choice.amount.toString() };
}

/** usd/usdc pay USDC, eur/eurc pay EURC (DESIGN §4); any other asset is not fundable by the delegation. */
export function currencyFunds(currency: string, symbol: string): boolean {
  return (['usd', 'usdc'].includes(currency) && symbol === 'USDC') || (['eur', 'eurc'].includes(currency) && symbol === 'EURC');
}

/**
 * Steps 6-7: claim (unique (user, requestId)), reserve the cap charge, back the merchant leg (and, for mode A,
 * the fee leg) in the ledger, sign. Anything refused before signing gives every claim back.
 */
export async function issuePayment(rc: RouterContext, req: PayRequest): Promise<IssuedPayment> {
  const { ctx } = rc;
  const leg = legOf(req.choice);
  if (!currencyFunds(req.delegation.currency, leg.asset.symbol)) {
    throw new AppError('BCK.ROUTER.0001', `a ${req.delegation.currency} delegation cannot pay ${leg.asset.symbol}`);
  }
  // Mode A collects a fee only when requestId is given; MPP pays the merchant leg only (DESIGN §4).
  const chargeFee = req.choice.type === 'x402' && (req.mode !== 'credential' || req.requestId !== undefined);
  const fees = computeFees(leg.amount, ctx.config.ROUTER_FEE_BPS, chargeFee);
  const paymentId = randomUUID();
  const row = {
    id: paymentId,
    userId: req.principal.userId,
    apiKeyId: req.principal.apiKeyId,
    requestId: req.requestId ?? null,
    delegationId: req.delegation.id,
    mode: req.mode,
    protocol: req.choice.type,
    x402Version: req.choice.type === 'x402' ? req.choice.version : null,
    status: 'Pending',
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
    feeRecipient: fees.feeAmount > 0n ? rc.feeRecipient : null,
    feeStatus: fees.feeAmount > 0n ? 'reserved' : 'none',
    resourceUrl: req.resourceUrl?.slice(0, 2048) ?? null,
    txHash: null,
    failureReason: null,
  };
  const claim = await claimPayment(ctx, row);
  if (claim.type === 'duplicate') throw duplicateError(claim.paymentId);
  req.onClaimed?.(paymentId);

  // Ledger backend: a buyer balance that cannot cover the merchant leg and the fee is refused before the cap is
  // touched ("nothing reserved", DESIGN §7 step 6). The read only refuses early: the conditional debit below
  // still decides, and a balance spent meanwhile releases the reservation.
  const buyer = req.principal.walletAddress;
  if ((await balanceOf(ctx, buyer, leg.asset.address)) < leg.amount + fees.feeAmount) {
    await dropClaim(ctx, paymentId);
    // The cap is checked first in step 6: a charge the delegation could not take anyway is still a 0003.
    const d = await ctx.db.em().findOne(Delegation, { id: req.delegation.id });
    const status = d === null ? 'Revoked' : effectiveStatus(d, ctx.now());
    if (d === null || status !== 'Active' || d.amountSpentCents + fees.capChargedCents > d.spendingLimitCents) {
      const reason = status === 'Active' ? 'delegation budget exceeded' : `delegation is ${status.toLowerCase()}`;
      throw new AppError('BCK.ROUTER.0003', reason, { delegationId: req.delegation.id });
    }
    throw new AppError('BCK.ROUTER.0009', `wallet ${buyer} holds too little ${leg.asset.symbol}`);
  }

  const reserved = await reserve(ctx, {
    delegationId: req.delegation.id,
    userId: req.principal.userId,
    amountCents: fees.capChargedCents,
    apiKeyId: req.principal.apiKeyId,
    recipient: leg.recipient,
    reference: paymentId,
    description: `router ${req.mode} ${req.choice.type}`,
    snapshot: req.delegation,
  });
  if (reserved.type === 'refused') {
    await dropClaim(ctx, paymentId);
    throw new AppError('BCK.ROUTER.0003', reserved.reason, { delegationId: req.delegation.id });
  }

  // Ledger backend: the authorization is backed by the buyer's balance, so the merchant leg moves now; mode A's
  // fee leg moves with it (there is no later answer to wait for).
  const movements: Movement[] = [{ from: buyer, to: leg.recipient, asset: leg.asset.address, amount: leg.amount, kind: 'router', reference: paymentId }];
  if (req.mode === 'credential' && fees.feeAmount > 0n) {
    movements.push({ from: buyer, to: rc.feeRecipient, asset: leg.asset.address, amount: fees.feeAmount, kind: 'router_fee', reference: paymentId });
  }
  try {
    await ctx.db.em().transactional((tx) => applyMovements(tx, movements, ctx.now()));
  } catch (err) {
    await release(ctx, { delegationId: req.delegation.id, amountCents: fees.capChargedCents, reference: paymentId, description: 'buyer balance short' });
    await dropClaim(ctx, paymentId);
    if (err instanceof InsufficientFunds) throw new AppError('BCK.ROUTER.0009', `wallet ${buyer} holds too little ${leg.asset.symbol}`);
    throw err;
  }

  const privateKey = await rc.walletKeys.get(req.principal.userId);
  const credential = buildPaymentCredential(req.choice, { address: buyer, privateKey });
  const feeStatus = req.mode === 'credential' && fees.feeAmount > 0n ? 'settled' : row.feeStatus;
  await setPaymentStatus(ctx, paymentId, ['Pending'], { status: 'Issued', feeStatus });
  return { paymentId, credential, fees, row: { ...row, status: 'Issued', feeStatus, createdAt: ctx.now(), updatedAt: ctx.now() } };
}

export type PaidOutcome =
  | { type: 'settled'; txHash: string | undefined }
  | { type: 'issued' }
  | { type: 'rejected'; reason: string };

/**
 * Step 8, after the merchant answered the paid call: a receipt settles it; another 402 fails it and releases the
 * fee leg; no (or a malformed) receipt leaves it Issued. The fee leg settles only on a 2xx answer. The merchant
 * leg is never released once sent.
 */
export async function finishPayment(
  rc: RouterContext,
  issued: IssuedPayment,
  answer: { status: number; outcome: PaidOutcome },
  buyer: string,
): Promise<{ status: string; txHash: string | null }> {
  const { ctx } = rc;
  const { row, fees } = issued;
  let feeStatus = row.feeStatus;
  if (row.feeStatus === 'reserved') {
    if (answer.status >= 200 && answer.status < 300) {
      try {
        await ctx.db.em().transactional((tx) =>
          applyMovements(tx, [{ from: buyer, to: rc.feeRecipient, asset: row.asset, amount: fees.feeAmount, kind: 'router_fee', reference: row.id }], ctx.now()),
        );
        feeStatus = 'settled';
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) throw err;
        feeStatus = 'released';
      }
    } else {
      feeStatus = 'released';
    }
    if (feeStatus === 'released' && fees.feeCents > 0n) {
      await release(ctx, { delegationId: row.delegationId, amountCents: fees.feeCents, reference: row.id, description: 'fee leg not settled' });
    }
  }
  const o = answer.outcome;
  const status = o.type === 'settled' ? 'Settled' : o.type === 'rejected' ? 'Failed' : 'Issued';
  const txHash = o.type === 'settled' ? (o.txHash ?? null) : null;
  await setPaymentStatus(ctx, row.id, ['Issued'], {
    status,
    txHash,
    feeStatus,
    failureReason: o.type === 'rejected' ? o.reason.slice(0, 500) : null,
  });
  return { status, txHash };
}
