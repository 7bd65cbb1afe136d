// The `request` auth-param of a Payment challenge: base64url (RFC 4648 §5, no padding) of JSON canonicalised with
// JCS (RFC 8785) (draft-ietf-httpauth-payment §5.1; mppx PaymentRequest.ts). The router never re-encodes a
// merchant's request — the credential echoes the original string byte for byte — so `serialize` exists for test
// merchants and the conformance vectors only.
import {
  type Decoded,
  decodeBase64Url,
  decoded,
  encodeBase64Url,
  invalid,
  isJsonObject,
  parseJson,
} from '../encoding.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../json-depth.js';

/** mppx refuses a request parameter longer than this (Challenge.ts `maxRequestParameterLength`). */
export const MAX_REQUEST_CHARS = 16 * 1024;

/**
 * RFC 8785 JSON Canonicalization Scheme: object members sorted by UTF-16 code units, no whitespace, strings and
 * numbers serialised as ECMAScript's JSON.stringify does (RFC 8785 §3.2.2). Throws on values JSON cannot carry.
 */
export function canonicalize(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS: non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalize(v)).join(',')}]`;
  if (isJsonObject(value)) {
    const members = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalize(value[k])}`);
    return `{${members.join(',')}}`;
  }
  throw new TypeError(`JCS: cannot serialise ${typeof value}`);
}

export const serialize = (request: Record<string, unknown>): string => encodeBase64Url(canonicalize(request));

/** base64url JSON object -> the object; `invalid` on bad base64url, bad UTF-8, bad JSON or a non-object. */
export function deserialize(encoded: string): Decoded<Record<string, unknown>> {
  if (encoded.length > MAX_REQUEST_CHARS) return invalid('request parameter too large');
  const text = decodeBase64Url(encoded);
  if (text === undefined) return invalid('request is not base64url of UTF-8 text');
  const json = parseJson(text);
  if (!json.ok) return invalid('request is not base64url of JSON');
  if (!isJsonObject(json.value)) return invalid('request is not a JSON object');
  // Untrusted JSON: nothing recursive (zod, canonicalize, JSON.stringify) may meet thousands of levels (json-depth.ts).
  if (exceedsJsonDepth(json.value)) return invalid(`request is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return decoded(json.value);
}
