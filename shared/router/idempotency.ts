import type { Principal } from '../accounts/api-keys.js';
import { AppError } from '../errors/app-error.js';
import type { RouterContext } from './context.js';
import { duplicateError } from './payments.js';

const WAIT_FOR_PAYMENT_ID_MS = 10_000;

/** What a claimed request tells the claim store: its paymentId once chosen, and that it was signed (spent). */
export interface ClaimHandle {
  announce(paymentId: string): void;
  spent(paymentId: string): void;
}

/**
 * Runs `work` under the in-process claim of (user, requestId). A duplicate gets 409 BCK.ROUTER.0002 naming the
 * first request's paymentId; refusals before signing give the claim back.
 */
export async function withClaim<T>(
  rc: RouterContext,
  principal: Principal,
  requestId: string | undefined,
  work: (claim: ClaimHandle) => Promise<T>,
): Promise<T> {
  if (requestId === undefined) return work({ announce: () => {}, spent: () => {} });
  const attempt = rc.claims.tryClaim(principal.userId, requestId);
  if (attempt.type === 'held') {
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), WAIT_FOR_PAYMENT_ID_MS).unref());
    const paymentId = await Promise.race([attempt.paymentId, timeout]);
    if (paymentId === undefined) throw new AppError('BCK.ROUTER.0002', 'a request with this requestId is in flight');
    throw duplicateError(paymentId);
  }
  let assigned = false;
  try {
    const result = await work({
      announce: (paymentId) => rc.claims.announce(principal.userId, requestId, paymentId),
      spent: (paymentId) => {
        assigned = true;
        rc.claims.assign(principal.userId, requestId, paymentId);
      },
    });
    // Nothing was paid (a free call): the claim ends with the request.
    if (!assigned) rc.claims.release(principal.userId, requestId);
    return result;
  } catch (err) {
    // Another process won the durable claim: tell this process's waiting duplicates its paymentId too.
    if (err instanceof AppError && err.code === 'BCK.ROUTER.0002' && typeof err.params.paymentId === 'string' && !assigned) {
      rc.claims.assign(principal.userId, requestId, err.params.paymentId);
      throw err;
    }
    // Spent once signed (assigned and not refused before signing): keep the claim; otherwise give it back.
    const refusedBeforeSigning = !assigned || (err instanceof AppError && ['BCK.ROUTER.0003', 'BCK.ROUTER.0009', 'BCK.ROUTER.0001'].includes(err.code));
    if (refusedBeforeSigning && !(err instanceof AppError && err.code === 'BCK.ROUTER.0002')) rc.claims.release(principal.userId, requestId);
    throw err;
  }
}
