// Mode B (POST /router/route): call the merchant, pay its 402 and relay the answer (router flow steps 1-8, docs/architecture.md).
import type { RouterPrincipal } from './principal.js';
import { AppError } from '../errors/app-error.js';
import { exceedsJsonDepth } from '../protocols/json-depth.js';
import type { UpstreamResult } from '../upstream/index.js';
import { REASON, upstreamAppError } from '../upstream/index.js';
import { resolveSlug, slugUpstreamError } from './catalog.js';
import { payAndResend } from './issue-steps.js';
import type { RouterServices } from './services.js';
import { feeRecord } from './fees.js';
import { withClaim } from './request-claims.js';
import { headerOf } from './outcome.js';
import { settlementRecord } from './responses.js';
import type { RouteBody } from './requests.js';

/** The body a 402 must fit in to be read for its requirements (x402 v1 puts them in the JSON body). */
const MAX_402_BODY_BYTES = 256 * 1024;

/**
 * Deepest JSON the route re-serializes (json-depth.ts: JSON.parse copes with any depth, JSON.stringify throws
 * RangeError near 4,000 levels). Past it an answer is relayed as its text and a request `body` is refused. Not the
 * protocol decoders' 64: these are the merchant's and the caller's own payloads, not payment offers, and 512 still
 * leaves the envelope around them far from the overflow.
 */
const MAX_ROUTE_JSON_DEPTH = 512;

/**
 * JSON when it parses, else text (as the contract's `body` is for a non-JSON answer). JSON nested deeper than we
 * can serialize again is relayed as its text too: re-serializing it would fail after the payment was recorded.
 */
function relayBody(r: Extract<UpstreamResult, { type: 'response' }>): unknown {
  const text = r.body.toString('utf8');
  if (text === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return text;
  }
  return exceedsJsonDepth(value, MAX_ROUTE_JSON_DEPTH) ? text : value;
}

/**
 * The probe's result, or the error it ends in. An answer over ROUTER_MAX_ROUTE_BODY_BYTES is refused like one over
 * the relay cap (400 BCK.ROUTER.0001, to-app-error.ts: asking again meets the same answer), naming the limit and
 * the streaming route that takes it. The paid hop's refusal is pay-and-resend's: 502 naming the payment.
 */
function responseOrThrow(
  r: UpstreamResult,
  limit: number,
  slug: string | undefined,
): Extract<UpstreamResult, { type: 'response' }> {
  if (r.type === 'response') return r;
  if (r.type === 'refused' && r.reason === REASON.responseTooLarge) {
    throw new AppError('BCK.ROUTER.0001', {
      details: `the merchant's answer exceeds the ${limit} bytes /router/route buffers (ROUTER_MAX_ROUTE_BODY_BYTES); /router/proxy streams it`,
      params: { reason: r.reason, limitBytes: limit },
    });
  }
  // A slug's upstream is never shown: the outbound module's reasons name hosts and addresses.
  throw slug === undefined ? upstreamAppError(r) : slugUpstreamError(r, slug);
}

export async function targetUrl(
  services: RouterServices,
  body: Pick<RouteBody, 'url' | 'slug' | 'path'>,
): Promise<string> {
  if (body.slug !== undefined) return (await resolveSlug(services.ctx, body.slug, body.path)).toString();
  if (body.url === undefined)
    throw new AppError('BCK.ROUTER.0001', { details: 'exactly one of url and slug is required' });
  return body.url;
}

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

/**
 * The bytes `body` is sent upstream as. A string goes as it is when the caller names its Content-Type (a form, a
 * text, JSON it encoded itself); otherwise the body is JSON, as the contract types it, so the string `"abc"` is
 * sent as `"abc"` with application/json, never as the bare `abc` that is not JSON.
 */
function upstreamPayload(value: unknown, headers: Record<string, string>): string {
  const typed = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
  if (typeof value === 'string' && typed) return value;
  if (!typed) headers['content-type'] = 'application/json';
  return JSON.stringify(value);
}

/** Mode B. `slot` is the caller's routerSlot: a duplicate requestId gives it back while it waits (request-claims.ts). */
export async function routePaid(
  services: RouterServices,
  principal: RouterPrincipal,
  body: RouteBody,
  slot: () => void,
) {
  // Refused before anything is held: a body we could not serialize would otherwise throw (a 500) below.
  if (exceedsJsonDepth(body.body, MAX_ROUTE_JSON_DEPTH)) {
    const issue = `body.body: nests arrays/objects deeper than ${MAX_ROUTE_JSON_DEPTH} levels`;
    throw new AppError('BCK.ROUTER.0001', { details: issue, params: { issues: [issue] } });
  }
  return withClaim(
    services,
    principal,
    body.requestId,
    async (claim) => {
      const url = await targetUrl(services, body);
      const headers: Record<string, string> = { ...(body.headers ?? {}) };
      const payload =
        body.body !== undefined && body.method !== 'GET' ? upstreamPayload(body.body, headers) : undefined;
      // Both hops buffer at most ROUTER_MAX_ROUTE_BODY_BYTES: the answer is parsed and re-serialized whole, which
      // takes many times its size in heap (the streaming relay's 100 MB cap is for /router/proxy).
      const maxBodyBytes = services.ctx.config.ROUTER_MAX_ROUTE_BODY_BYTES;
      const call = { url, method: body.method, headers, body: payload, maxBodyBytes };
      // Step 4: probe without payment. A free answer touches no database and leaves no record.
      const probe = responseOrThrow(await services.upstream.request(call), maxBodyBytes, body.slug);
      // Free: withClaim gives the claim back as the request ends.
      if (probe.status !== 402) return { status: probe.status, body: relayBody(probe), paid: false };
      const answerText = probe.body.length <= MAX_402_BODY_BYTES ? probe.body.toString('utf8') : undefined;
      const {
        issued,
        response: paid,
        done,
      } = await payAndResend(
        services,
        principal,
        {
          delegationId: body.delegationId,
          answer: { header: (n) => headerOf(probe.headers, n), body: answerText },
          mode: 'route',
          requestId: body.requestId,
          // A slug's upstream is never shown, not even in the ledger: the record names the slug instead.
          resourceUrl:
            body.slug === undefined
              ? url
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
