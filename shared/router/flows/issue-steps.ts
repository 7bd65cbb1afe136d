// The router's issuance as a list of steps (router flow, docs/architecture.md): choose, price, sign, reserve for
// every mode; then, for mode B (/router/route, the commerce route) and the streaming /router/proxy, resend and
// record. Each step is a module under steps/ that takes plain values and returns its result here; no step calls
// another or calls back. The probe (steps/probe.ts) is the entry point's own: route.ts buffers, stream.ts streams.
import type { RouterPrincipal } from '../principal.js';
import type { PaymentChoice, UpstreamAnswer } from '../../protocols/payment.js';
import {
  type CredentialHeader,
  type Failed,
  type OutgoingHeaders,
  REASON,
  type Refused,
  upstreamAppError,
} from '../../upstream/index.js';
import type { RouterServices } from '../services.js';
import type { ClaimHandle } from '../request-claims.js';
import { spendableDelegation } from '../spendable-delegation.js';
import { payerOf } from '../payer.js';
import { outcomeOf } from './outcome.js';
import { chooseFromAnswer } from '../steps/choose.js';
import { priceLeg } from '../steps/price.js';
import { signLeg } from '../steps/sign.js';
import { type IssuedPayment, reserve } from '../steps/reserve.js';
import { paidCallError, resendPaid } from '../steps/resend.js';
import { type RecordedOutcome, recordOutcome } from '../steps/record.js';
import { choiceProtocol, countPayment, countRefusedPayment, protocolLabel } from '../../metrics/payments.js';

export interface IssueRequest {
  readonly delegationId: string;
  /** The merchant's 402 (mode B), or the caller's target as a 402 would carry it (mode A). */
  readonly answer: UpstreamAnswer;
  readonly mode: 'credential' | 'route' | 'proxy';
  readonly requestId: string | undefined;
  readonly resourceUrl: string | undefined;
  /** The in-process claim: told the paymentId once the issuance transaction committed. */
  readonly claim: ClaimHandle;
  /** Last check on the choice before anything is priced, signed or written; throws to refuse. */
  readonly accept?: ((choice: PaymentChoice) => void) | undefined;
}

/**
 * choose -> price -> sign -> reserve. A refusal before the payment committed is counted with what was chosen so
 * far (shared/metrics).
 */
export async function issue(
  services: RouterServices,
  principal: RouterPrincipal,
  req: IssueRequest,
): Promise<IssuedPayment> {
  let choice: PaymentChoice | undefined;
  try {
    // choose: who pays (the delegation, the wallet), then what (the offer).
    const delegation = await spendableDelegation(services, principal, req.delegationId);
    const payer = await payerOf(services, principal, delegation);
    choice = chooseFromAnswer(services, delegation, req.answer, payer.address, payer.organization?.memberWallet);
    req.accept?.(choice);
    const pay = {
      principal,
      delegation,
      payer,
      choice,
      mode: req.mode,
      requestId: req.requestId,
      resourceUrl: req.resourceUrl,
      claim: req.claim,
    };
    // price: the leg, the fee, the currency and payee checks.
    const priced = priceLeg(services, pay);
    // sign: needs nothing from the database, so it comes first; dropped unsent if the reservation is refused.
    const signing = await signLeg(services, payer, choice, priced.leg.asset.address);
    // reserve: ONE transaction (payment row, cap charge, backing of the legs), then the claim is spent.
    return await reserve(services, pay, priced, signing);
  } catch (err) {
    countRefusedPayment(choiceProtocol(choice), err);
    throw err;
  }
}

export interface PaidAnswer<B> {
  readonly issued: IssuedPayment;
  readonly response: { type: 'response'; status: number; headers: OutgoingHeaders; body: B };
  /** The recorded outcome; `feeDeferred`: the fee leg waits for finishFeeLeg (args.feeAfterBody). */
  readonly done: RecordedOutcome;
}

/** Mode B after the probe's 402: issue (choose, price, sign, reserve), resend, record. */
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
  send: (
    credential: CredentialHeader,
  ) => Promise<{ type: 'response'; status: number; headers: OutgoingHeaders; body: B } | Refused | Failed>,
): Promise<PaidAnswer<B>> {
  const issued = await issue(services, principal, {
    ...args,
    // Checked again here, last thing before the payment (the delegation lookup may have waited on the database).
    accept: () => {
      if (args.abandoned?.() === true) throw upstreamAppError({ type: 'failed', reason: REASON.aborted });
    },
  });
  const protocol = protocolLabel(issued.row);
  // resend: from here on the requestId is spent.
  const response = await resendPaid(issued.signed, send);
  if (response.type !== 'response') {
    countPayment(protocol, 'unanswered');
    // record: the credential may have reached the merchant: the merchant leg stays spent, the fee leg is released.
    await recordOutcome(services, issued, { status: 502, outcome: { type: 'issued' } }, issued.buyer, false);
    throw paidCallError(response, issued.paymentId, args.slug);
  }
  // record: the merchant's answer settles, fails or leaves the payment Issued.
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
