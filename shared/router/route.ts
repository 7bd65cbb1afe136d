// Mode B (POST /router/route): call the merchant, pay its 402 and relay the answer (DESIGN §7 steps 1-8).
import type { Principal } from '../accounts/api-keys.js';
import { AppError } from '../errors/app-error.js';
import type { UpstreamResult } from '../upstream/index.js';
import { upstreamAppError } from '../upstream/index.js';
import { resolveSlug } from './catalog.js';
import { payAndResend } from './pay-and-resend.js';
import type { RouterContext } from './context.js';
import { feeRecord } from './fees.js';
import { withClaim } from './idempotency.js';
import { headerOf } from './outcome.js';
import { settlementRecord } from './payment-record.js';
import type { RouteBody } from './schemas.js';

/** The body a 402 must fit in to be read for its requirements (x402 v1 puts them in the JSON body). */
const MAX_402_BODY_BYTES = 256 * 1024;

/** JSON when the merchant said so (or it parses), else text. */
function relayBody(r: Extract<UpstreamResult, { type: 'response' }>): unknown {
  const text = r.body.toString('utf8');
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function responseOrThrow(r: UpstreamResult): Extract<UpstreamResult, { type: 'response' }> {
  if (r.type !== 'response') throw upstreamAppError(r);
  return r;
}

export async function targetUrl(rc: RouterContext, body: Pick<RouteBody, 'url' | 'slug' | 'path'>): Promise<string> {
  if (body.slug !== undefined) return (await resolveSlug(rc.ctx, body.slug, body.path)).toString();
  if (body.url === undefined) throw new AppError('BCK.ROUTER.0001', 'exactly one of url and slug is required');
  return body.url;
}

export async function routePaid(rc: RouterContext, principal: Principal, body: RouteBody) {
  const release = rc.limiter.acquire(principal.userId);
  if (release === undefined) throw new AppError('BCK.ROUTER.0007', 'too many router calls in flight for this user');
  try {
    return await withClaim(rc, principal, body.requestId, async (claim) => {
      const url = await targetUrl(rc, body);
      const headers: Record<string, string> = { ...(body.headers ?? {}) };
      let payload: string | undefined;
      if (body.body !== undefined && body.method !== 'GET') {
        payload = typeof body.body === 'string' ? body.body : JSON.stringify(body.body);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      }
      const call = { url, method: body.method, headers, body: payload };
      // Step 4: probe without payment. A free answer touches no database and leaves no record.
      const probe = responseOrThrow(await rc.upstream.request({ ...call, maxBodyBytes: undefined }));
      // Free: withClaim gives the claim back as the request ends.
      if (probe.status !== 402) return { status: probe.status, body: relayBody(probe), paid: false };
      const answerText = probe.body.length <= MAX_402_BODY_BYTES ? probe.body.toString('utf8') : undefined;
      const { issued, response: paid, done } = await payAndResend(
        rc,
        principal,
        {
          delegationId: body.delegationId,
          answer: { header: (n) => headerOf(probe.headers, n), body: answerText },
          mode: 'route',
          requestId: body.requestId,
          // A slug's upstream is never shown, not even in the ledger: the record names the slug instead.
          resourceUrl: body.slug === undefined ? url : `slug:${body.slug}${body.path === undefined ? '' : `/${body.path.replace(/^\//, '')}`}`,
          claim,
        },
        (credential) => rc.upstream.request({ ...call, credential }),
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
    });
  } finally {
    release();
  }
}
