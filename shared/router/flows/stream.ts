// The streaming variant of mode B (ALL /api/v1/router/proxy, aliases /api/v1/proxy and /proxy): the request body
// is buffered (a paid call re-sends it), the answer streams back with X-Router-Payment-*. Steps as in route.ts;
// the caller's connection is reached only through the CallerChannel port (caller-channel.ts).
import type { ApiKeyCaller } from '../../auth/caller.js';
import { type IncomingHeaders, upstreamAppError } from '../../upstream/index.js';
import type { CallerChannel } from '../caller-channel.js';
import { withClaim } from '../request-claims.js';
import { headerOf } from './outcome.js';
import { payAndResend } from './issue-steps.js';
import { feeAfterRelay } from '../steps/record.js';
import { streamed402Text } from '../steps/probe.js';
import type { ProxyHeaders } from '../requests.js';
import type { RouterServices } from '../services.js';

export interface StreamRequest {
  /** The X-Router-* control headers, parsed (requests.ts ProxyHeaders). */
  readonly control: ProxyHeaders;
  readonly method: string;
  /** Every header as received: the outbound module's scrubber drops X-Router-* (ours) with the rest it drops. */
  readonly headers: IncomingHeaders;
}

/**
 * The streaming mode B call. `slot` is the caller's routerSlot, taken before the body is read: a duplicate
 * requestId gives it back while it waits (request-claims.ts).
 */
export async function proxyStream(
  services: RouterServices,
  principal: ApiKeyCaller,
  request: StreamRequest,
  caller: CallerChannel,
  slot: () => void,
): Promise<void> {
  const h = request.control;
  await withClaim(
    services,
    principal,
    h['x-router-request-id'],
    async (claim) => {
      const body = await caller.readBody();
      const call = {
        url: h['x-router-target-url'],
        method: request.method,
        headers: request.headers,
        body: body.length > 0 ? body : undefined,
        upstreamAuthorization: h['x-router-upstream-authorization'],
      };
      // probe: without payment.
      const probe = await services.upstream.stream(call);
      if (probe.type !== 'response') throw upstreamAppError(probe);
      if (probe.status !== 402) {
        // Free: the claim ends now, not when the (possibly long) answer has streamed.
        claim.release();
        await caller.relay(probe);
        return;
      }
      const text = await streamed402Text(probe.body);
      // choose, price, sign, reserve, resend, record (issue-steps.ts); the fee leg waits for the relay.
      const {
        issued,
        response: paid,
        done,
      } = await payAndResend(
        services,
        principal,
        {
          delegationId: h['x-router-delegation-id'],
          answer: { header: (n) => headerOf(probe.headers, n), body: text },
          mode: 'proxy',
          requestId: h['x-router-request-id'],
          resourceUrl: call.url,
          claim,
          feeAfterBody: true,
          // The caller left while the merchant answered: no payment for an answer nobody will receive. (The
          // unpaid call itself runs to its end, bounded by the outbound timeouts: cutting it short would take an
          // AbortController and an EventTarget listener on every relayed request; the relay frees a caller who
          // left.)
          abandoned: () => caller.left(),
        },
        (credential) => services.upstream.stream({ ...call, credential }),
      );
      caller.paid(issued.paymentId);
      let relayed = false;
      try {
        relayed = await caller.relay(paid, {
          'x-router-payment-id': issued.paymentId,
          'x-router-payment-status': done.status,
          ...(done.txHash === null ? {} : { 'x-router-tx-hash': done.txHash }),
        });
      } finally {
        // The fee is earned by an answer the caller received whole; one that broke off (the merchant failed, a
        // cap, our caller left) releases it, as /router/route does when it cannot read the answer.
        if (done.feeDeferred) await feeAfterRelay(services, issued, issued.buyer, relayed);
      }
    },
    { beforeWait: slot },
  );
}
