// Mode B (POST /router/route, and the commerce route with an OAuth principal): probe the merchant, pay its 402 and
// relay the answer (router flow steps 1-8, docs/architecture.md; the steps after the probe: issue-steps.ts).
import type { RouterPrincipal } from '../principal.js';
import { AppError } from '../../errors/app-error.js';
import { payAndResend } from './issue-steps.js';
import type { RouterServices } from '../services.js';
import { feeRecord } from '../fees.js';
import { withClaim } from '../request-claims.js';
import { headerOf } from './outcome.js';
import { settlementRecord } from '../responses.js';
import type { RouteBody } from '../requests.js';
import { answerText, refuseDeepBody, relayBody, responseOrThrow, routeCall } from '../steps/probe.js';

/**
 * router flow step 2 (docs/architecture.md): one of the user's ROUTER_MAX_CONCURRENT_PER_USER slots (429 BCK.ROUTER.0007 when none is
 * free), taken before the request body is read, so a user's parallel uploads are bounded too. The function gives
 * it back (once; later calls do nothing).
 */
export function routerSlot(services: RouterServices, principal: RouterPrincipal): () => void {
  const release = services.limiter.acquire(principal.userId);
  if (release === undefined)
    throw new AppError('BCK.ROUTER.0007', { details: 'too many router calls in flight for this user' });
  return release;
}

/** Mode B. `slot` is the caller's routerSlot: a duplicate requestId gives it back while it waits (request-claims.ts). */
export async function routePaid(
  services: RouterServices,
  principal: RouterPrincipal,
  body: RouteBody,
  slot: () => void,
) {
  refuseDeepBody(body.body);
  return withClaim(
    services,
    principal,
    body.requestId,
    async (claim) => {
      const call = await routeCall(services, body);
      // probe: without payment. A free answer touches no database and leaves no record.
      const probe = responseOrThrow(await services.upstream.request(call), call.maxBodyBytes, body.slug);
      // Free: withClaim gives the claim back as the request ends.
      if (probe.status !== 402) return { status: probe.status, body: relayBody(probe), paid: false };
      // choose, price, sign, reserve, resend, record (issue-steps.ts).
      const {
        issued,
        response: paid,
        done,
      } = await payAndResend(
        services,
        principal,
        {
          delegationId: body.delegationId,
          answer: { header: (n) => headerOf(probe.headers, n), body: answerText(probe) },
          mode: 'route',
          requestId: body.requestId,
          // A slug's upstream is never shown, not even in the ledger: the record names the slug instead.
          resourceUrl:
            body.slug === undefined
              ? call.url
              : `slug:${body.slug}${body.path === undefined ? '' : `/${body.path.replace(/^\//, '')}`}`,
          claim,
          slug: body.slug,
        },
        (credential) => services.upstream.request({ ...call, credential }),
      );
      return {
        status: paid.status,
        body: relayBody(paid),
        paid: true,
        payment: {
          paymentId: issued.paymentId,
          settlement: settlementRecord(issued.row),
          fee: feeRecord(issued.fees, false),
          status: done.status,
          txHash: done.txHash,
        },
      };
    },
    { beforeWait: slot },
  );
}
