// The streaming variant of mode B (ALL /api/v1/router/proxy, aliases /api/v1/proxy and /proxy): the request body
// is buffered (a paid call re-sends it), the answer streams back with X-Router-Payment-*.
import { z } from 'zod';
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY } from '../../shared/auth/route-access.js';
import { AppError } from '../../shared/errors/app-error.js';
import type { RouterServices } from '../../shared/router/services.js';
import { withClaim } from '../../shared/router/idempotency.js';
import { headerOf } from '../../shared/router/outcome.js';
import { feeAfterRelay, payAndResend } from '../../shared/router/pay-and-resend.js';
import { routerSlot } from '../../shared/router/route.js';
import { RequestId } from '../../shared/router/schemas.js';
import { line } from '../../shared/text.js';
import { UpstreamStreamError, upstreamAppError } from '../../shared/upstream/index.js';
import { parseOr400 } from '../http/json.js';
import { readBody } from '../http/read-body.js';
import type { RouteTable, RouterRequest } from '../http/route-table.js';
import { readAll, relay } from '../http/stream-answer.js';

const MAX_402_BODY_BYTES = 256 * 1024;

// Node decodes header bytes as latin1, so a UTF-8 value arrives as C1 characters: line() refuses it, as it does
// TAB (the only control HTTP lets through). Node's parser has already refused NUL, CR and LF.
const ProxyHeaders = z.object({
  'x-router-target-url': line(2048).min(1),
  'x-router-delegation-id': z.uuid(),
  'x-router-request-id': RequestId,
  'x-router-upstream-authorization': line(8192).optional(),
});

export function streamRoutes(table: RouteTable, services: RouterServices): void {
  const bodyLimits = {
    maxBytes: services.ctx.config.ROUTER_MAX_REQUEST_BYTES,
    timeoutMs: services.ctx.config.ROUTER_REQUEST_BODY_TIMEOUT_MS,
  };
  const handler = async ({ req, res, caller, facts }: RouterRequest<ApiKeyCaller>) => {
    const h = parseOr400(ProxyHeaders, req.headers, 'headers');
    const release = routerSlot(services, caller);
    try {
      await withClaim(
        services,
        caller,
        h['x-router-request-id'],
        async (claim) => {
          const body = await readBody(req, bodyLimits);
          const call = {
            url: h['x-router-target-url'],
            method: req.method ?? 'GET',
            // X-Router-* (our control headers) are dropped by the outbound module's scrubber with the rest.
            headers: req.headers,
            body: body.length > 0 ? body : undefined,
            upstreamAuthorization: h['x-router-upstream-authorization'],
          };
          const probe = await services.upstream.stream(call);
          if (probe.type !== 'response') throw upstreamAppError(probe);
          if (probe.status !== 402) {
            // Free: the claim ends now, not when the (possibly long) answer has streamed.
            claim.release();
            await relay(res, probe);
            return;
          }
          // A 402 whose body breaks off (reset, stall) is the merchant's failure: 502, as /router/route answers it.
          const text = await readAll(probe.body, MAX_402_BODY_BYTES).catch((err: unknown) => {
            throw err instanceof UpstreamStreamError
              ? upstreamAppError(err.outcome)
              : new AppError('BCK.HTTP.0502', "the merchant's 402 answer broke off");
          });
          const {
            issued,
            response: paid,
            done,
          } = await payAndResend(
            services,
            caller,
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
              // AbortController and an EventTarget listener on every relayed request; relay() frees a caller who left.)
              abandoned: () => res.destroyed,
            },
            (credential) => services.upstream.stream({ ...call, credential }),
          );
          facts.paymentId = issued.paymentId;
          let relayed = false;
          try {
            relayed = await relay(res, paid, {
              'x-router-payment-id': issued.paymentId,
              'x-router-payment-status': done.status,
              ...(done.txHash === null ? {} : { 'x-router-tx-hash': done.txHash }),
            });
          } finally {
            // The fee is earned by an answer the caller received whole; one that broke off (the merchant
            // failed, a cap, our caller left) releases it, as /router/route does when it cannot read the answer.
            if (done.feeDeferred) await feeAfterRelay(services, issued, caller.walletAddress, relayed);
          }
        },
        { beforeWait: release },
      );
    } finally {
      release();
    }
  };
  for (const path of ['/api/v1/router/proxy', '/api/v1/proxy', '/proxy']) table.add('*', path, API_KEY, handler);
}
