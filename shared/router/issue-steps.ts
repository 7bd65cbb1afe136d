// Steps 5-8 of mode B, shared by /router/route (buffered) and /router/proxy (streamed): choose from the
// merchant's 402, issue the payment, re-send with the credential, record the outcome.
import type { RouterPrincipal } from './principal.js';
import type { UpstreamAnswer } from '../protocols/payment.js';
import { AppError } from '../errors/app-error.js';
import {
  type CredentialHeader,
  type Failed,
  type OutgoingHeaders,
  REASON,
  type Refused,
  upstreamAppError,
} from '../upstream/index.js';
import { chooseFromAnswer } from './steps/choose.js';
import type { RouterServices } from './services.js';
import type { ClaimHandle } from './request-claims.js';
import { spendableDelegation } from './spendable-delegation.js';
import { payerOf } from './payer.js';
import { outcomeOf } from './outcome.js';
import { type IssuedPayment, finishFeeLeg, finishPayment, issuePayment } from './steps/reserve.js';
import { toCredentialHeader } from './credential-header.js';
import type { PaymentChoice } from '../protocols/payment.js';
import { choiceProtocol, countPayment, countRefusedPayment, protocolLabel } from '../metrics/payments.js';

export interface PaidAnswer<B> {
  readonly issued: IssuedPayment;
  readonly response: { type: 'response'; status: number; headers: OutgoingHeaders; body: B };
  /** The recorded outcome; `feeDeferred`: the fee leg waits for finishFeeLeg (args.feeAfterBody). */
  readonly done: { status: string; txHash: string | null; feeDeferred: boolean };
}

/**
 * finishPayment, never failing the paid call: the payment committed and the merchant answered, so a database
 * error now (a busy lock, a dropped connection) must not cost the caller the answer it paid for. The payment
 * stays Issued and its fee leg reserved, for the admin's sweep (fee-sweep.ts) to release.
 */
async function recordOutcome(
  services: RouterServices,
  issued: IssuedPayment,
  answer: Parameters<typeof finishPayment>[2],
  buyer: string,
  feeAfterBody: boolean,
): Promise<PaidAnswer<unknown>['done']> {
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

export async function payAndResend<B>(
  services: RouterServices,
  principal: RouterPrincipal,
  args: {
    delegationId: string;
    answer: UpstreamAnswer;
    mode: 'route' | 'proxy';
    requestId: string;
    resourceUrl: string;
    claim: ClaimHandle;
    /** The catalog slug the call went to: its upstream is never named in an error. */
    slug?: string | undefined;
    /** Streamed answers: a 2xx's fee leg is settled once its body was relayed (finishFeeLeg), not on its headers. */
    feeAfterBody?: boolean | undefined;
    /** True once nobody waits for the answer (the streaming proxy's caller left): then nothing is paid. */
    abandoned?: (() => boolean) | undefined;
  },
  resend: (
    credential: CredentialHeader,
  ) => Promise<{ type: 'response'; status: number; headers: OutgoingHeaders; body: B } | Refused | Failed>,
): Promise<PaidAnswer<B>> {
  // What was chosen so far: a refusal before the payment committed is counted with it (shared/metrics).
  let choice: PaymentChoice | undefined;
  let issued: IssuedPayment;
  try {
    const delegation = await spendableDelegation(services, principal, args.delegationId);
    const payer = await payerOf(services, principal, delegation);
    choice = chooseFromAnswer(services, delegation, args.answer, payer.address, payer.organization?.memberWallet);
    // Checked again here, last thing before the payment (the delegation lookup may have waited on the database).
    if (args.abandoned?.() === true) throw upstreamAppError({ type: 'failed', reason: REASON.aborted });
    issued = await issuePayment(services, {
      principal,
      delegation,
      payer,
      choice,
      mode: args.mode,
      requestId: args.requestId,
      resourceUrl: args.resourceUrl,
      claim: args.claim,
    });
  } catch (err) {
    countRefusedPayment(choiceProtocol(choice), err);
    throw err;
  }
  const protocol = protocolLabel(issued.row);
  // Step 7: from here on the requestId is spent.
  const response = await resend(toCredentialHeader(issued.signed.header));
  if (response.type !== 'response') {
    countPayment(protocol, 'unanswered');
    // The credential may have reached the merchant: the merchant leg stays spent, the fee leg is released.
    await recordOutcome(services, issued, { status: 502, outcome: { type: 'issued' } }, issued.buyer, false);
    // After the payment the caller's request was fine: whatever refused the paid hop (an answer over the size
    // limit, a name that now resolves to a private address) is the merchant's failure, a 502 naming the payment.
    // A catalog slug's upstream is never named: the outbound module's reasons name hosts and addresses.
    const { paymentId } = issued;
    const [details, params] =
      args.slug === undefined
        ? [`the paid call to the merchant failed: ${response.reason}`, { reason: response.reason }]
        : [`the paid call to the upstream of slug ${args.slug} failed`, { slug: args.slug }];
    throw new AppError('BCK.HTTP.0502', { details, params: { ...params, paymentId }, extra: { paymentId } });
  }
  const done = await recordOutcome(
    services,
    issued,
    { status: response.status, outcome: outcomeOf(issued.row.protocol, response.status, response.headers) },
    issued.buyer,
    args.feeAfterBody === true,
  );
  countPayment(protocol, done.status === 'Settled' ? 'settled' : done.status === 'Failed' ? 'rejected' : 'issued');
  return { issued, response, done };
}
