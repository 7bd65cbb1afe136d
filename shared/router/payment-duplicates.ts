// A refused payment insert: which payment it collided with, and the 409 naming it.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { paymentIdOf, paymentIdOfNonce } from './payment-store.js';

/**
 * The payment a refused insert collided with: the same requestId (409 BCK.ROUTER.0002), or the same signed
 * authorization nonce, i.e. an MPP challenge paid already (409 BCK.ROUTER.0013); both name the first payment.
 */
export async function duplicateOf(
  ctx: ServiceContext,
  userId: string,
  requestScope: string,
  requestId: string | undefined,
  authNonce: string,
  cause: unknown,
): Promise<unknown> {
  if (requestId !== undefined) {
    const first = await paymentIdOf(ctx, userId, requestScope, requestId);
    if (first !== undefined) return duplicateError(first);
  }
  const paid = await paymentIdOfNonce(ctx, userId, authNonce);
  if (paid !== undefined) {
    return new AppError('BCK.ROUTER.0013', {
      details: `this challenge was paid already: payment ${paid}`,
      params: { paymentId: paid },
      extra: { paymentId: paid },
    });
  }
  // The row that held the key is gone again (rolled back meanwhile): the original error.
  return cause;
}

export function duplicateError(paymentId: string): AppError {
  return new AppError('BCK.ROUTER.0002', {
    details: `a payment exists for this requestId: ${paymentId}`,
    params: { paymentId },
    extra: { paymentId },
  });
}
