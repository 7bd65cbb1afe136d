// The sandbox ledger's release of failed payments (admin process, every minute, SETTLEMENT_BACKEND=ledger only).
// The ledger moves a payment's merchant leg when the router signs its EIP-3009 authorization, as if the merchant had
// submitted it at once. A merchant that answers the paid call with another 402 has not taken it (the payment is
// Failed), but on a chain it could still submit the authorization until its validBefore, so the money stays with it
// until then, exactly as the rpc backend keeps it reserved. Once the authorization has expired, nobody can use it:
// the payment becomes Expired, the merchant leg goes back to the buyer (a `router_refund` movement), and the cap
// charge of that leg is given back to the delegation (and its group budget), in one transaction made once by the
// conditional Failed -> Expired move, whichever admin process runs it.
import type { ServiceContext } from '../../shared/context.js';
import type { SqlTx } from '../../shared/db/sql.js';
import type { Logger } from '../../shared/log.js';
import { giveBackCapIn } from '../../shared/router/cap-give-back.js';
import {
  type ExpiredFailure,
  expireFailedIn,
  expiredFailures,
  releaseFeeStatusIn,
} from '../../shared/router/payment-store.js';
import { InsufficientFunds, refundMerchantLegIn } from '../../shared/settlement/token-ledger.js';
import { type Job, messageOf } from './job.js';

/** Clock skew allowed between the process that signed (its validBefore) and this one. */
const SKEW_MS = 60_000;

export interface FailedRelease {
  /** Payments whose merchant leg went back to the buyer. */
  released: number;
  /** Payments left Failed because their payee no longer holds the leg (a payroute wallet that spent it). */
  kept: string[];
}

/**
 * Releases the Failed x402 payments signed before `signedBefore` (their authorizations have expired), in pages of
 * `page`. It pages on past the ones it keeps (a payee that spent the leg), so they never hold back the others.
 */
export async function releaseExpiredFailures(
  ctx: ServiceContext,
  signedBefore: Date,
  page = 100,
): Promise<FailedRelease> {
  const result: FailedRelease = { released: 0, kept: [] };
  let after = '';
  for (;;) {
    const failures = await expiredFailures(ctx, signedBefore, page, after);
    for (const p of failures) {
      try {
        if (await ctx.db.sql.transaction((tx) => releaseIn(tx, p, ctx.now()))) result.released += 1;
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) throw err;
        result.kept.push(p.id);
      }
    }
    if (failures.length < page) return result;
    after = failures[failures.length - 1]?.id ?? after;
  }
}

async function releaseIn(tx: SqlTx, p: ExpiredFailure, now: Date): Promise<boolean> {
  if (!(await expireFailedIn(tx, p.id, now))) return false;
  await refundMerchantLegIn(tx, p.id, now);
  // A Failed payment's fee leg was released when its answer was recorded (its cap share given back then); one still
  // reserved (a recording cut short) goes with it now.
  let cents = p.capChargedCents - p.feeCents;
  if (p.feeStatus === 'reserved') {
    await releaseFeeStatusIn(tx, p.id, now);
    cents = p.capChargedCents;
  }
  await giveBackCapIn(
    tx,
    {
      paymentId: p.id,
      delegationId: p.delegationId,
      userId: p.userId,
      cents,
      description: 'failed payment: authorization expired',
    },
    now,
  );
  return true;
}

export function failedLegReleaseJob(ctx: ServiceContext, log: Logger, intervalMs = 60_000): Job {
  const afterMs = ctx.config.ROUTER_MAX_AUTH_TTL_SECS * 1000 + SKEW_MS;
  return {
    name: 'failed payment release',
    intervalMs,
    run: () =>
      releaseExpiredFailures(ctx, new Date(ctx.now().getTime() - afterMs))
        .then((r) => {
          if (r.released > 0)
            log.info({ released: r.released }, 'failed payments released after their authorization expired');
          if (r.kept.length > 0)
            log.warn({ paymentIds: r.kept }, 'failed payments kept: their payee no longer holds the merchant leg');
        })
        .catch((err: unknown) => log.warn({ err: messageOf(err) }, 'failed payment release failed')),
  };
}
