import type { Principal } from '../accounts/api-keys.js';
import { AppError } from '../errors/app-error.js';
import type { RouterContext } from './context.js';
import { duplicateError } from './payments.js';

const WAIT_FOR_PAYMENT_ID_MS = 10_000;

/**
 * Runs `work` under the in-process claim of (user, requestId). A duplicate gets 409 BCK.ROUTER.0002 naming the
 * first request's paymentId; refusals before signing give the claim back.
 */
export async function withClaim<T>(
  rc: RouterContext,
  principal: Principal,
  requestId: string | undefined,
  work: (assign: (paymentId: string) => void) => Promise<T>,
): Promise<T> {
  if (requestId === undefined) return work(() => {});
  const attempt = rc.claims.tryClaim(principal.userId, requestId);
  if (attempt.type === 'held') {
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), WAIT_FOR_PAYMENT_ID_MS).unref());
    const paymentId = await Promise.race([attempt.paymentId, timeout]);
    if (paymentId === undefined) throw new AppError('BCK.ROUTER.0002', 'a request with this requestId is in flight');
    throw duplicateError(paymentId);
  }
  let assigned = false;
  try {
    return await work((paymentId) => {
      assigned = true;
      rc.claims.assign(principal.userId, requestId, paymentId);
    });
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
