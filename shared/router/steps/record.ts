// Step "record" (router flow step 8, docs/architecture.md): once the merchant answered the paid call, the payment's
// outcome and its fee leg. Called by the orchestrator (../issue-steps.ts) only; calls no other step.
import type { SqlTx } from '../../db/sql.js';
import { InsufficientFunds } from '../../settlement/token-ledger.js';
import type { RouterServices } from '../services.js';
import { countFeePaid } from '../../metrics/payments.js';
import { paymentStatusOf, resolveFeeIn, updatePaymentIn } from '../payment-store.js';
import { releaseFeeLegIn } from '../cap-give-back.js';
import type { IssuedPayment } from './reserve.js';

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

/** The recorded outcome; `feeDeferred`: the fee leg waits for finishFeeLeg (feeAfterBody). */
export type RecordedOutcome = { status: string; txHash: string | null; feeDeferred: boolean };

/**
 * finishPayment, never failing the paid call: the payment committed and the merchant answered, so a database
 * error now (a busy lock, a dropped connection) must not cost the caller the answer it paid for. The payment
 * stays Issued and its fee leg reserved, for the admin's sweep (admin/jobs/fee-sweep.ts) to release.
 */
export async function recordOutcome(
  services: RouterServices,
  issued: IssuedPayment,
  answer: Parameters<typeof finishPayment>[2],
  buyer: string,
  feeAfterBody: boolean,
): Promise<RecordedOutcome> {
  try {
    return await finishPayment(services, issued, answer, buyer, { feeAfterBody });
  } catch (err) {
    services.ctx.log.error(
      { err: err instanceof Error ? err.message : String(err), paymentId: issued.paymentId },
      'recording a paid call failed: left Issued',
    );
    // Whether or not the recording committed, a streamed answer's fee leg may still be reserved: finishFeeLeg
    // resolves it after the relay if so (a no-op if not); any other leg is left to the sweep.
    return { status: 'Issued', txHash: null, feeDeferred: feeAfterBody && issued.row.feeStatus === 'reserved' };
  }
}

/**
 * finishFeeLeg once a streamed answer was relayed (`relayed`: whole): the answer is gone already, so a database
 * error is logged and the leg left reserved for the sweep, as recordOutcome does.
 */
export async function feeAfterRelay(
  services: RouterServices,
  issued: IssuedPayment,
  buyer: string,
  relayed: boolean,
): Promise<void> {
  try {
    await finishFeeLeg(services, issued, buyer, relayed);
  } catch (err) {
    services.ctx.log.error(
      { err: err instanceof Error ? err.message : String(err), paymentId: issued.paymentId },
      'resolving a fee leg failed: left reserved',
    );
  }
}
