// Step "probe" of mode B (router flow step 4, docs/architecture.md): the merchant called unpaid, its answer read
// (free, or a 402 whose requirements are read). Writes nothing (a slug is read from the catalog); calls no other
// step.
import type { Readable } from 'node:stream';
import { AppError } from '../../errors/app-error.js';
import { exceedsJsonDepth } from '../../protocols/json-depth.js';
import type { UpstreamResult } from '../../upstream/index.js';
import { REASON, UpstreamStreamError, upstreamAppError } from '../../upstream/index.js';
import { resolveSlug, slugUpstreamError } from '../catalog.js';
import type { RouterServices } from '../services.js';
import type { RouteBody } from '../requests.js';

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
export function relayBody(r: Extract<UpstreamResult, { type: 'response' }>): unknown {
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
 * the streaming route that takes it. The paid hop's refusal is steps/resend.ts's: 502 naming the payment.
 */
export function responseOrThrow(
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

async function targetUrl(services: RouterServices, body: Pick<RouteBody, 'url' | 'slug' | 'path'>): Promise<string> {
  if (body.slug !== undefined) return (await resolveSlug(services.ctx, body.slug, body.path)).toString();
  if (body.url === undefined)
    throw new AppError('BCK.ROUTER.0001', { details: 'exactly one of url and slug is required' });
  return body.url;
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

/** Refused before anything is held: a body we could not serialize would otherwise throw (a 500) later. */
export function refuseDeepBody(value: unknown): void {
  if (exceedsJsonDepth(value, MAX_ROUTE_JSON_DEPTH)) {
    const issue = `body.body: nests arrays/objects deeper than ${MAX_ROUTE_JSON_DEPTH} levels`;
    throw new AppError('BCK.ROUTER.0001', { details: issue, params: { issues: [issue] } });
  }
}

/** The call mode B makes, unpaid and then paid: the target, the caller's headers and the payload. */
export async function routeCall(services: RouterServices, body: RouteBody) {
  const url = await targetUrl(services, body);
  const headers: Record<string, string> = { ...(body.headers ?? {}) };
  const payload = body.body !== undefined && body.method !== 'GET' ? upstreamPayload(body.body, headers) : undefined;
  // Both hops buffer at most ROUTER_MAX_ROUTE_BODY_BYTES: the answer is parsed and re-serialized whole, which
  // takes many times its size in heap (the streaming relay's 100 MB cap is for /router/proxy).
  const maxBodyBytes = services.ctx.config.ROUTER_MAX_ROUTE_BODY_BYTES;
  return { url, method: body.method, headers, body: payload, maxBodyBytes };
}

/** The text of a buffered 402 whose requirements are read, or undefined past MAX_402_BODY_BYTES. */
export function answerText(probe: Extract<UpstreamResult, { type: 'response' }>): string | undefined {
  return probe.body.length <= MAX_402_BODY_BYTES ? probe.body.toString('utf8') : undefined;
}

/** The whole body as text, or undefined past `limit` bytes (the stream is then destroyed). */
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

/** A streamed 402's text. One whose body breaks off (reset, stall) is the merchant's failure: 502, as /router/route answers it. */
export function streamed402Text(body: Readable): Promise<string | undefined> {
  return readAll(body, MAX_402_BODY_BYTES).catch((err: unknown) => {
    throw err instanceof UpstreamStreamError
      ? upstreamAppError(err.outcome)
      : new AppError('BCK.HTTP.0502', { details: "the merchant's 402 answer broke off" });
  });
}
