// Step "resend": the merchant called again with the signed credential. From here on the requestId is spent; a
// paid call that is not answered is the merchant's failure, a 502 naming the payment.
import { AppError } from '../../errors/app-error.js';
import type { SignedPayment } from '../../protocols/payment.js';
import type { CredentialHeader, Failed, Refused } from '../../upstream/index.js';
import { toCredentialHeader } from '../credential-header.js';

/** `send`: the caller's transport (buffered for /router/route, streamed for /router/proxy). */
export function resendPaid<R>(signed: SignedPayment, send: (credential: CredentialHeader) => Promise<R>): Promise<R> {
  return send(toCredentialHeader(signed.header));
}

/**
 * After the payment the caller's request was fine: whatever refused the paid hop (an answer over the size limit, a
 * name that now resolves to a private address) is the merchant's failure, a 502 naming the payment. A catalog
 * slug's upstream is never named: the outbound module's reasons name hosts and addresses.
 */
export function paidCallError(response: Refused | Failed, paymentId: string, slug: string | undefined): AppError {
  const [details, params] =
    slug === undefined
      ? [`the paid call to the merchant failed: ${response.reason}`, { reason: response.reason }]
      : [`the paid call to the upstream of slug ${slug} failed`, { slug }];
  return new AppError('BCK.HTTP.0502', { details, params: { ...params, paymentId }, extra: { paymentId } });
}
