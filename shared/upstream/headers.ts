// Header hygiene for outbound calls, in one place (mppx's src/proxy/internal/Headers.ts habit): what is removed
// from the caller's headers before the merchant sees them, and what is removed from the merchant's answer before
// our caller sees it, each with the reason beside it.

import { boundedMemo } from '../memo.js';

/** Headers as node:http gives them (`IncomingHttpHeaders`) or as a plain record. */
export type IncomingHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;
/** Lower-case names; repeated fields as arrays (undici and node:http both accept this shape). */
export type OutgoingHeaders = Record<string, string | string[]>;

/**
 * The credential the router itself attaches to a paid re-send; set after scrubbing, so it replaces any field of
 * that name the caller sent. `name` (lower case) is `payment-signature` (x402 v2), `x-payment` (x402 v1),
 * `authorization` (MPP: `Authorization: Payment <credential>`), or the field an MPP challenge's `header` parameter
 * names (mppx `requiresAuth`: `Payment-Authorization`), which credentialHeaderRefusal has accepted.
 */
export interface CredentialHeader {
  readonly name: string;
  readonly value: string;
}

// Hop-by-hop fields (RFC 9110 §7.6.1): they describe one connection, not the message, and a proxy must not forward
// them. `proxy-connection` and `keep-alive` are the pre-standard spellings; undici also refuses several of them.
const HOP_BY_HOP: Record<string, string> = {
  connection: 'hop-by-hop (RFC 9110 §7.6.1); the fields it names are removed too',
  'keep-alive': 'hop-by-hop (RFC 9110 §7.6.1, RFC 2068 §19.7.1)',
  'proxy-connection': 'hop-by-hop, non-standard (RFC 9110 §7.6.1)',
  te: 'hop-by-hop (RFC 9110 §10.1.4): our connection negotiates its own transfer codings',
  trailer: 'hop-by-hop (RFC 9110 §6.6.2): trailers are not relayed',
  'transfer-encoding': 'hop-by-hop (RFC 9112 §6.1): the body is re-framed on each connection',
  upgrade: 'hop-by-hop (RFC 9110 §7.8): no protocol switch through the router',
};

/** Dropped from the caller's request, with the threat each one carries. */
export const REQUEST_DROPPED: Readonly<Record<string, string>> = {
  ...HOP_BY_HOP,
  host: 'derived from the checked target URL; a caller-chosen Host would address another virtual host (RFC 9110 §7.2)',
  'content-length': 'recomputed from the body actually sent; a stale value desynchronises the framing (RFC 9110 §8.6)',
  expect: '100-continue is not supported by the client; the body is sent at once',
  cookie: "the caller's cookies belong to this service's origin, never to the merchant",
  authorization: "the caller's Authorization is its API key for this service; the merchant only gets an explicit one",
  'proxy-authorization': 'credentials for a proxy, consumed by the first hop (RFC 9110 §11.7.2)',
  'payment-signature': 'x402 v2 credential: only the router decides whether and how to pay',
  'x-payment': 'x402 v1 credential: only the router decides whether and how to pay',
  'payment-authorization': 'payment credential: only the router decides whether and how to pay',
  'payment-receipt': 'a receipt is an answer from a merchant, never part of a request',
  'payment-response': 'a settlement answer from a merchant, never part of a request',
  'x-payment-response': 'a settlement answer from a merchant, never part of a request',
  'accept-payment': 'payment negotiation is the router’s, not the caller’s',
  forwarded: 'client-address claims (RFC 7239) the caller could forge; we do not vouch for them',
  'x-real-ip': 'client-address claim the caller could forge',
  via: 'the caller’s proxy chain is not the merchant’s business and is forgeable (RFC 9110 §7.6.3)',
  'accept-encoding':
    'the router reads 402 bodies and counts bytes against its caps; identity encoding keeps both honest (no decompression bombs)',
};

/** Dropped from the request by prefix. */
export const REQUEST_DROPPED_PREFIXES: Readonly<Record<string, string>> = {
  'x-router-': 'our own control headers (target URL, delegation, request id, upstream authorization) stay with us',
  'x-forwarded-': 'client-address and scheme claims the caller could forge; we do not vouch for them',
};

/** Dropped from the merchant's answer, with the reason. */
export const RESPONSE_DROPPED: Readonly<Record<string, string>> = {
  ...HOP_BY_HOP,
  'proxy-authenticate': 'a challenge to the next proxy hop, not to our caller (RFC 9110 §11.7.1)',
  'proxy-authentication-info': "the next proxy hop's authentication result, not our caller's (RFC 9110 §11.7.3)",
  'x-correlation-id':
    'ours: the id the caller quotes to support must be the one in our logs, not one the merchant chose',
  'set-cookie':
    "a merchant must not set cookies under this service's origin (session fixation across the proxy's domain)",
  'set-cookie2': 'obsolete cookie header (RFC 2965), dropped for the same reason as set-cookie',
  location: 'redirects are not followed, and a relative Location would resolve against our origin, not the merchant’s',
  'alt-svc': "a merchant must not advertise alternative services for this service's origin (RFC 7838)",
  'strict-transport-security': "transport policy of the merchant's origin, not of ours (RFC 6797)",
  'clear-site-data': "would clear our caller's data for this service's origin",
};

/** Dropped from the response by prefix. */
export const RESPONSE_DROPPED_PREFIXES: Readonly<Record<string, string>> = {
  'x-router-': 'only the router sets X-Router-* (payment id, status, tx hash): a merchant must not forge them',
};

/** RFC 9110 §5.1 field-name = token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 §5.5: CR, LF and NUL are never valid in a field value (header injection). */
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;

const REQUEST_PREFIXES = Object.keys(REQUEST_DROPPED_PREFIXES);

/**
 * Payment credential fields: dropped from the caller's headers precisely so that only the router sets them, hence
 * the only dropped names a credential may go in (draft-ietf-httpauth-payment §5.2 `Authorization`, mppx
 * `Payment-Authorization`; x402 `PAYMENT-SIGNATURE` / `X-PAYMENT`).
 */
const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set([
  'authorization',
  'payment-authorization',
  'payment-signature',
  'x-payment',
]);
/** Longest credential field name accepted (mppx and the Challenge parser allow 64 characters). */
const MAX_CREDENTIAL_NAME = 64;

/**
 * Why the field a merchant names for its credential (an MPP challenge's `header` parameter) cannot carry it, or
 * undefined when it can. The merchant is not trusted with the framing or the routing of our request: a name that
 * is not an RFC 9110 §5.1 token, a field we drop from callers for its threat (host, content-length, hop-by-hop
 * fields, cookie, forwarded, ... above), our own `x-router-*` / forgeable `x-forwarded-*` prefixes, or a
 * `content-*` field (representation metadata of the body, RFC 9110 §8: the credential would replace the caller's
 * Content-Type) is refused. The router checks this while CHOOSING what to pay, before any payment is issued, so a
 * refused name never costs money (router flow step 5, docs/architecture.md).
 */
export function credentialHeaderRefusal(name: string): string | undefined {
  if (name.length === 0 || name.length > MAX_CREDENTIAL_NAME || !TOKEN.test(name))
    return 'not a valid field name (RFC 9110 §5.1)';
  const lower = name.toLowerCase();
  if (CREDENTIAL_FIELDS.has(lower)) return undefined;
  if (lower === '__proto__') return 'not a field name';
  if (Object.hasOwn(REQUEST_DROPPED, lower))
    return `the router never sends a merchant-chosen ${lower} (${REQUEST_DROPPED[lower]})`;
  const prefix = REQUEST_PREFIXES.find((p) => lower.startsWith(p));
  if (prefix !== undefined) return `${prefix}* fields are not forwarded (${REQUEST_DROPPED_PREFIXES[prefix]})`;
  if (lower.startsWith('content-')) return 'content-* fields describe the body (RFC 9110 §8), not a credential';
  return undefined;
}
const RESPONSE_PREFIXES = Object.keys(RESPONSE_DROPPED_PREFIXES);

/** A field name's fate apart from the per-message Connection list: invalid, dropped, or kept under `name`. */
type NameVerdict = { kind: 'invalid' } | { kind: 'dropped' } | { kind: 'kept'; name: string };

/** A field name's fate in one direction: a pure function of the raw name, memoised (the same few dozen names). */
function nameVerdicts(exact: Readonly<Record<string, string>>, prefixes: readonly string[], checkToken: boolean) {
  return boundedMemo(
    (rawName): NameVerdict => {
      const name = rawName.toLowerCase();
      if (checkToken && !TOKEN.test(rawName)) return { kind: 'invalid' };
      // `__proto__` would set the prototype of the plain object the headers are collected in, not a field.
      if (name === '__proto__' || Object.hasOwn(exact, name) || prefixes.some((p) => name.startsWith(p)))
        return { kind: 'dropped' };
      return { kind: 'kept', name };
    },
    { max: 1024, maxKeyLength: 64 },
  );
}

// Request names are checked against the token grammar (they may come from a JSON body); response names were
// parsed off the wire by undici's HTTP parser, which already refuses non-token names.
const requestVerdict = nameVerdicts(REQUEST_DROPPED, REQUEST_PREFIXES, true);
const responseVerdict = nameVerdicts(RESPONSE_DROPPED, RESPONSE_PREFIXES, false);

const NONE: ReadonlySet<string> = new Set();

/** Field names listed in Connection are hop-by-hop for this message too (RFC 9110 §7.6.1). */
function connectionOptions(value: string | readonly string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return NONE;
  const values = typeof value === 'string' ? [value] : value;
  const names = new Set<string>();
  for (const v of values) for (const token of v.split(',')) names.add(token.trim().toLowerCase());
  names.delete('');
  return names;
}

/** The Connection field of a header record whose names may be in any case. */
function connectionField(incoming: IncomingHeaders): string | readonly string[] | undefined {
  const direct = incoming.connection;
  if (direct !== undefined) return direct;
  for (const name in incoming) if (name.length === 10 && name.toLowerCase() === 'connection') return incoming[name];
  return undefined;
}

const valuesOf = (value: string | readonly string[]): readonly string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];

/** Adds a field under a lower-case name; a repeated field becomes an array (RFC 9110 §5.3). */
function add(headers: OutgoingHeaders, name: string, value: string | readonly string[]): void {
  const existing = headers[name];
  if (existing === undefined && typeof value === 'string') {
    headers[name] = value; // the common case: one value, nothing to merge
    return;
  }
  const all = existing === undefined ? [...valuesOf(value)] : [...valuesOf(existing), ...valuesOf(value)];
  const [only] = all;
  headers[name] = all.length === 1 && only !== undefined ? only : all;
}

/** RFC 9110 §5.5: no CR, LF or NUL in any value (and only strings). */
const validValue = (value: string | readonly string[]): boolean =>
  typeof value === 'string'
    ? !FORBIDDEN_IN_VALUE.test(value)
    : valuesOf(value).every((v) => typeof v === 'string' && !FORBIDDEN_IN_VALUE.test(v));

/** Authorization schemes are case-insensitive (RFC 9110 §11.1). */
const isPaymentScheme = (value: string): boolean => /^\s*payment(\s|$)/i.test(value);

export type ScrubbedRequestHeaders = { ok: true; headers: OutgoingHeaders } | { ok: false; reason: string };

/**
 * The caller's headers as they may reach a merchant. `upstreamAuthorization` (from X-Router-Upstream-Authorization)
 * becomes `Authorization`, unless it uses the Payment scheme; `credential` is the router's own payment header.
 * A malformed name or value refuses the whole request rather than guessing.
 */
export function scrubRequestHeaders(
  incoming: IncomingHeaders,
  extra: { upstreamAuthorization?: string | undefined; credential?: CredentialHeader | undefined } = {},
): ScrubbedRequestHeaders {
  const headers: OutgoingHeaders = {};
  const connectionNamed = connectionOptions(connectionField(incoming));
  for (const rawName in incoming) {
    if (!Object.hasOwn(incoming, rawName)) continue;
    const value = incoming[rawName];
    if (value === undefined) continue;
    const verdict = requestVerdict(rawName);
    if (verdict.kind === 'invalid') return { ok: false, reason: 'a request header has an invalid name' };
    if (!validValue(value))
      return { ok: false, reason: `the request header "${rawName.toLowerCase()}" has an invalid value` };
    if (
      verdict.kind === 'dropped' ||
      connectionNamed.has(verdict.name) ||
      (typeof value !== 'string' && value.length === 0)
    )
      continue;
    add(headers, verdict.name, value);
  }
  const auth = extra.upstreamAuthorization;
  if (auth !== undefined) {
    if (FORBIDDEN_IN_VALUE.test(auth)) return { ok: false, reason: 'the upstream authorization has an invalid value' };
    if (!isPaymentScheme(auth)) headers.authorization = auth;
  }
  if (extra.credential !== undefined) {
    // Checked when choosing, before the payment (router/steps/choose.ts); again here so no caller of the outbound module
    // can send a credential under a name that would reframe or reroute the request.
    const refused = credentialHeaderRefusal(extra.credential.name);
    if (refused !== undefined) return { ok: false, reason: `the payment credential field is refused: ${refused}` };
    if (FORBIDDEN_IN_VALUE.test(extra.credential.value))
      return { ok: false, reason: 'the payment credential has an invalid value' };
    // Assigned after the caller's fields: any field of the same name the caller sent is replaced, never merged.
    headers[extra.credential.name.toLowerCase()] = extra.credential.value;
  }
  return { ok: true, headers };
}

/** The merchant's answer headers as our caller may see them: lower-case names, hygiene applied. */
export function scrubResponseHeaders(incoming: IncomingHeaders): OutgoingHeaders {
  const headers: OutgoingHeaders = {};
  const connectionNamed = connectionOptions(connectionField(incoming));
  for (const rawName in incoming) {
    if (!Object.hasOwn(incoming, rawName)) continue;
    const value = incoming[rawName];
    if (value === undefined) continue;
    const verdict = responseVerdict(rawName);
    if (verdict.kind !== 'kept' || connectionNamed.has(verdict.name)) continue;
    const kept = typeof value === 'string' ? value : valuesOf(value).filter((v) => typeof v === 'string');
    if (typeof kept === 'string' || kept.length > 0) add(headers, verdict.name, kept);
  }
  return headers;
}

/**
 * The relayed Content-Length of an answer that carries no content, in place (`headers` are the scrubbed ones).
 * RFC 9110 §8.6: a server MUST NOT send Content-Length in a 1xx or 204 response, so the merchant's is dropped
 * (Node's server adds none to a 204). RFC 9110 §15.3.6: a server MUST NOT generate content in a 205; the
 * router relays none, whatever the merchant declared, and says so with `Content-Length: 0` (the framing RFC 7231
 * §6.3.6 required), so our caller's parser waits for no bytes. A 304's Content-Length (and a HEAD answer's) is the
 * size of the representation it stands for (RFC 9110 §8.6) and is kept.
 */
export function frameNoContent(status: number, headers: OutgoingHeaders): OutgoingHeaders {
  if (status === 205) headers['content-length'] = '0';
  else if (status === 204 || (status >= 100 && status < 200)) delete headers['content-length'];
  return headers;
}

/**
 * Whether an answer's Transfer-Encoding applies a coding other than chunked (RFC 9112 §6.1, §7; RFC 9110 §10.1.4).
 * Our client asks for none (no TE), decodes none, and Transfer-Encoding is hop-by-hop, dropped from what we relay:
 * a gzip (or any other) transfer coding would reach our caller as raw encoded bytes under a header set that no
 * longer says so, corrupted content. Such an answer is refused as an invalid upstream response. `chunked` alone
 * (once, RFC 9112 §6.1: never applied twice) is framing undici removes.
 */
export function foreignTransferCoding(value: string | readonly string[] | undefined): boolean {
  if (value === undefined) return false;
  let chunked = 0;
  for (const v of typeof value === 'string' ? [value] : value) {
    for (const token of v.split(',')) {
      const coding = token.trim().toLowerCase();
      if (coding === 'chunked') chunked++;
      else if (coding !== '') return true;
    }
  }
  return chunked !== 1;
}
