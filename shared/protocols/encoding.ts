// Byte-level codecs shared by the payment protocols. Every decoder here returns `undefined` instead of throwing:
// the inputs are headers and bodies written by strangers, and a parser that throws on hostile input is a crash
// waiting to happen on the proxy's hot path.
//
// Node's `Buffer.from(s, 'base64')` silently skips characters outside the alphabet, so the alphabet is checked
// first; the bytes must then be valid UTF-8 (a fatal decoder, not U+FFFD replacement — MPP conformance
// vector base64url.json `invalid_utf8_rejected`).

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** RFC 4648 §4 alphabet with optional padding: the form x402 headers use (`Base64EncodedRegex` in @x402/core). */
const BASE64_STD = /^[A-Za-z0-9+/]*={0,2}$/;
/** RFC 4648 §5 URL-safe alphabet; padding is not used by MPP but tolerated. */
const BASE64_URL = /^[A-Za-z0-9_-]*={0,2}$/;

function bytesToUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** A base64 body length that no encoder produces (one leftover character carries fewer than 8 bits). */
const impossibleLength = (s: string): boolean => s.replace(/=+$/, '').length % 4 === 1;

/** Standard base64 (padding optional) -> UTF-8 text; `undefined` when not base64 or not UTF-8. */
export function decodeBase64(s: string): string | undefined {
  if (!BASE64_STD.test(s) || impossibleLength(s)) return undefined;
  if (s.includes('=') && s.length % 4 !== 0) return undefined;
  return bytesToUtf8(Buffer.from(s, 'base64'));
}

/** base64url (RFC 4648 §5) -> UTF-8 text; `undefined` when not base64url or not UTF-8. */
export function decodeBase64Url(s: string): string | undefined {
  if (!BASE64_URL.test(s) || impossibleLength(s)) return undefined;
  return bytesToUtf8(Buffer.from(s, 'base64url'));
}

/** UTF-8 text -> standard base64 with padding (x402 `PAYMENT-SIGNATURE` / `X-PAYMENT`). */
export const encodeBase64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** UTF-8 text -> base64url without padding (MPP credentials, RFC 4648 §5). */
export const encodeBase64Url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

/** JSON.parse that reports failure as `undefined`-tagged result instead of throwing (deep nesting included). */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** A plain JSON object (not an array, not null). */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The result every protocol decoder returns: callers `switch` on `type`. */
export type Decoded<T> = { type: 'decoded'; value: T } | { type: 'invalid'; reason: string };

export const decoded = <T>(value: T): Decoded<T> => ({ type: 'decoded', value });
export const invalid = <T = never>(reason: string): Decoded<T> => ({ type: 'invalid', reason });
