// How an outbound call that ended without an answer reaches the wire: a policy refusal is the
// caller's request being unroutable, or the merchant's answer being one we will not take (body or headers over a
// limit): 400 BCK.ROUTER.0001, the reason in details, since sending it again meets the same answer. A failure to
// reach the merchant is a bad gateway (502, retryable). Reasons are ours, never exception text, so they are safe
// to show.
import { AppError } from '../errors/app-error.js';
import type { Failed, Refused } from './outcomes.js';

export function upstreamAppError(outcome: Refused | Failed): AppError {
  if (outcome.type === 'refused')
    return new AppError('BCK.ROUTER.0001', { details: outcome.reason, params: { reason: outcome.reason } });
  return new AppError('BCK.HTTP.0502', {
    details: `The merchant could not be reached: ${outcome.reason}`,
    params: {
      reason: outcome.reason,
    },
  });
}
