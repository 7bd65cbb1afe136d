// The streaming variant of mode B (ALL /api/v1/router/proxy, aliases /api/v1/proxy and /proxy), DESIGN §7:
// the request body is buffered (a paid call re-sends it), the answer streams back with X-Router-Payment-*.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { Principal } from '../../shared/accounts/api-keys.js';
import { AppError } from '../../shared/errors/app-error.js';
import type { RouterContext } from '../../shared/router/context.js';
import { withClaim } from '../../shared/router/idempotency.js';
import { headerOf } from '../../shared/router/outcome.js';
import { payAndResend } from '../../shared/router/pay-and-resend.js';
import { RequestId } from '../../shared/router/schemas.js';
import { REASON, UpstreamStreamError, type UpstreamStreamResult, upstreamAppError } from '../../shared/upstream/index.js';
import { parseOr400 } from '../http/json.js';
import { readBody } from '../http/read-body.js';
import type { RouteTable } from '../http/route-table.js';

const MAX_402_BODY_BYTES = 256 * 1024;

const ProxyHeaders = z.object({
  'x-router-target-url': z.string().min(1).max(2048),
  'x-router-delegation-id': z.uuid(),
  'x-router-request-id': RequestId,
  'x-router-upstream-authorization': z.string().max(8192).optional(),
});

async function readAll(body: Readable, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    const b = c as Buffer;
    size += b.length;
    if (size > limit) {
      body.destroy();
      return undefined;
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function relay(
  res: ServerResponse,
  r: Extract<UpstreamStreamResult, { type: 'response' }>,
  extra?: Record<string, string>,
): Promise<void> {
  // The body is relayed byte for byte (the outbound module asks for no content coding and decodes nothing), so the
  // merchant's content-length stays true; keeping it saves a chunked re-framing per answer. A body cut by a cap or
  // a stall ends in a destroyed connection, which a declared length makes detectable to the client.
  // Our caller left while the answer was on its way (or it was paid for): nothing to write to, nothing to wait for.
  if (res.destroyed) {
    r.body.destroy();
    return;
  }
  // The answer broke off before we began relaying it (during the payment's bookkeeping): its error was already
  // emitted, so pipe() would wait for ever. Nothing is written yet: the merchant's failure, a 502.
  if (r.body.errored !== null) {
    const paymentId = extra?.['x-router-payment-id'];
    const ids = paymentId === undefined ? {} : { paymentId };
    throw new AppError('BCK.HTTP.0502', "the merchant's answer broke off", ids, ids);
  }
  res.writeHead(r.status, extra === undefined ? r.headers : { ...r.headers, ...extra });
  // pipe() rather than stream.pipeline(): pipeline builds an AbortController (and a DOMException) per request,
  // about 10% of the proxy's CPU on the free relay (BENCHMARKS.md).
  // The listeners are passed inline: a named closure per request would also cost a tsx keepNames call each.
  await new Promise<void>((resolve) => {
    r.body.once('error', () => {
      r.body.destroy();
      res.destroy();
      resolve();
    });
    res.once('close', () => {
      if (!res.writableFinished) r.body.destroy(); // our client went away
      resolve();
    });
    r.body.pipe(res);
  });
}

export function streamRoutes(table: RouteTable, rc: RouterContext): void {
  const bodyLimits = { maxBytes: rc.ctx.config.ROUTER_MAX_REQUEST_BYTES, timeoutMs: rc.ctx.config.ROUTER_REQUEST_BODY_TIMEOUT_MS };
  const handler = async ({ req, res, principal }: { req: IncomingMessage; res: ServerResponse; principal: Principal }) => {
    const h = parseOr400(ProxyHeaders, req.headers, 'headers');
    const release = rc.limiter.acquire(principal.userId);
    if (release === undefined) throw new AppError('BCK.ROUTER.0007', 'too many router calls in flight for this user');
    try {
      await withClaim(rc, principal, h['x-router-request-id'], async (claim) => {
        const body = await readBody(req, bodyLimits);
        const call = {
          url: h['x-router-target-url'],
          method: req.method ?? 'GET',
          // X-Router-* (our control headers) are dropped by the outbound module's scrubber with the rest.
          headers: req.headers,
          body: body.length > 0 ? body : undefined,
          upstreamAuthorization: h['x-router-upstream-authorization'],
        };
        const probe = await rc.upstream.stream(call);
        if (probe.type !== 'response') throw upstreamAppError(probe);
        if (probe.status !== 402) {
          // Free: the claim ends now, not when the (possibly long) answer has streamed.
          claim.release();
          await relay(res, probe);
          return;
        }
        // A 402 whose body breaks off (reset, stall) is the merchant's failure: 502, as /router/route answers it.
        const text = await readAll(probe.body, MAX_402_BODY_BYTES).catch((err: unknown) => {
          throw err instanceof UpstreamStreamError ? upstreamAppError(err.outcome) : new AppError('BCK.HTTP.0502', 'the merchant\'s 402 answer broke off');
        });
        // The caller left while the merchant answered: no payment for an answer nobody will receive. (The unpaid
        // call itself runs to its end, bounded by the outbound timeouts: cutting it short would take an
        // AbortController and an EventTarget listener on every relayed request; relay() frees a caller who left.)
        if (res.destroyed) throw upstreamAppError({ type: 'failed', reason: REASON.aborted });
        const { issued, response: paid, done } = await payAndResend(
          rc,
          principal,
          {
            delegationId: h['x-router-delegation-id'],
            answer: { header: (n) => headerOf(probe.headers, n), body: text },
            mode: 'proxy',
            requestId: h['x-router-request-id'],
            resourceUrl: call.url,
            claim,
          },
          (credential) => rc.upstream.stream({ ...call, credential }),
        );
        await relay(res, paid, {
          'x-router-payment-id': issued.paymentId,
          'x-router-payment-status': done.status,
          ...(done.txHash === null ? {} : { 'x-router-tx-hash': done.txHash }),
        });
      });
    } finally {
      release();
    }
  };
  for (const path of ['/api/v1/router/proxy', '/api/v1/proxy', '/proxy']) table.add('*', path, handler);
}

