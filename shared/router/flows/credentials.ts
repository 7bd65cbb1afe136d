// Mode A (POST /router/payments): issue a payment credential for requirements the caller fetched itself
// (router flow steps 1, 3, 5-7 of docs/architecture.md, without calling the merchant): the steps
// choose, price, sign and reserve of issue-steps.ts.
import type { ApiKeyCaller } from '../../auth/caller.js';
import { AppError } from '../../errors/app-error.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../../protocols/json-depth.js';
import { type UpstreamAnswer, malformedOffer } from '../../protocols/payment.js';
import { refusal } from '../steps/choose.js';
import type { RouterServices } from '../services.js';
import { feeRecord } from '../fees.js';
import { withClaim } from '../request-claims.js';
import { issue } from './issue-steps.js';
import { settlementRecord } from '../responses.js';
import type { CredentialBody } from '../requests.js';
import { countPayment, protocolLabel } from '../../metrics/payments.js';

/** The caller's target as the merchant's 402 would have carried it, so one chooser serves every mode. */
function answerOf(body: CredentialBody): UpstreamAnswer {
  const t = body.target as Record<string, unknown>;
  if (body.protocol === 'mpp') {
    if (typeof t.challenge !== 'string')
      throw new AppError('BCK.ROUTER.0001', { details: 'target.challenge is required for mpp' });
    const challenge = t.challenge;
    return { header: (n) => (n.toLowerCase() === 'www-authenticate' ? challenge : undefined) };
  }
  if (!Array.isArray(t.accepts))
    throw new AppError('BCK.ROUTER.0001', { details: 'target.accepts is required for x402' });
  if (t.x402Version === 1) {
    // Encoding a v1 target (JSON.stringify) would overflow the stack on a few thousand levels (RangeError, a 500):
    // refused as the malformed offer it is, with the refusal the decoder gives a deep 402 (json-depth.ts). A v2
    // target is handed on as an object, and the decoder checks its depth.
    if (exceedsJsonDepth(t.accepts, MAX_JSON_DEPTH - 1))
      throw refusal(malformedOffer(`target.accepts is nested deeper than ${MAX_JSON_DEPTH} levels`));
    return { header: () => undefined, body: JSON.stringify({ x402Version: 1, accepts: t.accepts }) };
  }
  // As the PAYMENT-REQUIRED header would decode: only the keys the caller sent.
  const required: Record<string, unknown> = { x402Version: 2, accepts: t.accepts };
  if (t.resource !== undefined) required.resource = t.resource;
  if (t.extensions !== undefined) required.extensions = t.extensions;
  return { header: () => undefined, paymentRequired: required };
}

export async function issueCredential(services: RouterServices, principal: ApiKeyCaller, body: CredentialBody) {
  const answer = answerOf(body);
  return withClaim(services, principal, body.requestId, async (claim) => {
    // choose, price, sign, reserve (issue-steps.ts); a refusal is counted there, a credential handed out is `issued`.
    const issued = await issue(services, principal, {
      delegationId: body.delegationId,
      answer,
      mode: 'credential',
      requestId: body.requestId,
      resourceUrl: body.resourceUrl,
      claim,
      accept: (choice) => {
        if (choice.type !== body.protocol)
          throw new AppError('BCK.ROUTER.0001', { details: `target is not a fundable ${body.protocol} offer` });
      },
    });
    countPayment(protocolLabel(issued.row), 'issued');
    return {
      paymentId: issued.paymentId,
      protocol: issued.row.protocol,
      credential: {
        transport: 'header',
        name: issued.signed.header.name,
        value: issued.signed.header.value,
      },
      settlement: settlementRecord(issued.row),
      fee: feeRecord(issued.fees, true),
      delegationId: issued.row.delegationId,
      status: 'Issued',
      ...(issued.row.x402Version == null ? {} : { x402Version: issued.row.x402Version }),
      resourceUrl: body.resourceUrl ?? null,
      requestId: body.requestId ?? null,
      txHash: null,
    };
  });
}
