// x402 v1 and v2 for the router: decoding a merchant's 402 (its options are judged in x402-offers.ts) and the
// settlement receipt.
//
// Wire references (read in the installed libraries, which are what merchants run):
// - v1: x402@1.2.0 `exact/evm` client (`preparePaymentHeader`, `encodePayment`) and x402-express@1.2.0: the 402 is
//   a JSON body `{x402Version: 1, accepts}`, the credential header `X-PAYMENT`, the receipt `X-PAYMENT-RESPONSE`.
// - v2: @x402/core 2.27 client + @x402/evm `ExactEvmScheme`: the 402 is the `PAYMENT-REQUIRED` header, the
//   credential header `PAYMENT-SIGNATURE` carries `{x402Version: 2, payload, extensions, resource, accepted}`
//   where `accepted` is the offered `accepts[i]` verbatim (the resource server compares it field by field) and
//   `extensions` is echoed; the receipt is `PAYMENT-RESPONSE`.
// All three header values are standard base64 (RFC 4648 §4) of UTF-8 JSON, with padding.
//
// Every decoder returns a `Decoded<T>` union and never throws (test/protocols/protocols.fuzz.test.ts).
import type { Hex } from 'viem';
import type { z } from 'zod';
import { type Decoded, decodeBase64, decoded, invalid, isJsonObject, parseJson } from './encoding.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from './json-depth.js';
import {
  MAX_ACCEPTS,
  MAX_BODY_CHARS,
  MAX_HEADER_CHARS,
  PaymentRequiredV1,
  PaymentRequiredV2,
  SettlementReceipt,
} from './x402-schemas.js';

export type X402Version = 1 | 2;

/** Header names (x402 v2 spec "HTTP transport"; x402@1 `X-PAYMENT`). Node lowercases incoming names. */
export const X402Headers = {
  paymentRequired: 'PAYMENT-REQUIRED',
  credential: { 1: 'X-PAYMENT', 2: 'PAYMENT-SIGNATURE' },
  receipt: { 1: 'X-PAYMENT-RESPONSE', 2: 'PAYMENT-RESPONSE' },
} as const;

/** Summarises a zod failure in one short line: the first issue's path and message. */
export function issue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const first = error.issues[0];
  if (first === undefined) return 'invalid';
  const path = first.path.map(String).join('.');
  return path === '' ? first.message : `${path}: ${first.message}`;
}

/**
 * The input itself once `schema` accepts it. The x402 schemas transform nothing, and zod's output is a copy that
 * silently drops a `__proto__` key (it assigns instead of defining): an echo of `accepted` or `extensions` must be
 * the merchant's own object, whatever keys it has.
 */
function verbatim<S extends z.ZodType>(schema: S, value: unknown, what: string): Decoded<z.infer<S>> {
  const parsed = schema.safeParse(value);
  return parsed.success ? decoded(value as z.infer<S>) : invalid(`${what}: ${issue(parsed.error)}`);
}

/**
 * Refuses an `accepts` longer than MAX_ACCEPTS before zod walks it: a 402 with 10,000 options costs one length
 * check, not 10,000 element parses.
 */
function tooManyAccepts(value: unknown): boolean {
  return isJsonObject(value) && Array.isArray(value.accepts) && value.accepts.length > MAX_ACCEPTS;
}

/**
 * Refuses a 402 nested deeper than MAX_JSON_DEPTH before anything recursive walks it: the v2 credential echoes
 * `accepted`, `resource` and `extensions` through JSON.stringify, which overflows the stack (RangeError, a 500)
 * on a few thousand levels that JSON.parse accepted (json-depth.ts).
 */
const TOO_DEEP = `nested deeper than ${MAX_JSON_DEPTH} levels`;

/** Decodes a parsed v1 402 body (`{x402Version: 1, accepts}`). */
export function decodePaymentRequiredV1Value(value: unknown): Decoded<PaymentRequiredV1> {
  if (!isJsonObject(value)) return invalid('the 402 body is not a JSON object');
  if (tooManyAccepts(value)) return invalid(`more than ${MAX_ACCEPTS} payment options`);
  if (exceedsJsonDepth(value)) return invalid(`the 402 body is ${TOO_DEEP}`);
  return verbatim(PaymentRequiredV1, value, 'x402 v1 body');
}

/** Decodes a v1 402 body as text (what the router holds after reading the upstream answer). */
export function decodePaymentRequiredV1(body: string): Decoded<PaymentRequiredV1> {
  if (body.length > MAX_BODY_CHARS) return invalid(`the 402 body is larger than ${MAX_BODY_CHARS} characters`);
  const json = parseJson(body);
  if (!json.ok) return invalid('the 402 body is not JSON');
  return decodePaymentRequiredV1Value(json.value);
}

/** Decodes an already-decoded v2 PaymentRequired object (mode A posts it as JSON). */
export function decodePaymentRequiredV2Value(value: unknown): Decoded<PaymentRequiredV2> {
  if (!isJsonObject(value)) return invalid('PAYMENT-REQUIRED is not a JSON object');
  if (tooManyAccepts(value)) return invalid(`more than ${MAX_ACCEPTS} payment options`);
  if (exceedsJsonDepth(value)) return invalid(`PAYMENT-REQUIRED is ${TOO_DEEP}`);
  return verbatim(PaymentRequiredV2, value, 'PAYMENT-REQUIRED');
}

/** Decodes a `PAYMENT-REQUIRED` header value: standard base64 of UTF-8 JSON, at most MAX_HEADER_CHARS. */
export function decodePaymentRequiredV2(header: string): Decoded<PaymentRequiredV2> {
  if (header.length > MAX_HEADER_CHARS)
    return invalid(`PAYMENT-REQUIRED is longer than ${MAX_HEADER_CHARS} characters`);
  const text = decodeBase64(header.trim());
  if (text === undefined) return invalid('PAYMENT-REQUIRED is not base64 of UTF-8 text');
  const json = parseJson(text);
  if (!json.ok) return invalid('PAYMENT-REQUIRED is not base64 of JSON');
  return decodePaymentRequiredV2Value(json.value);
}

// ---------------------------------------------------------------------------------------------------------------
// Receipts

export interface X402Receipt extends SettlementReceipt {
  /** The settlement transaction when it is an EVM transaction hash and the receipt reports success. */
  readonly txHash: Hex | undefined;
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * Reads `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1). A malformed receipt is `invalid` and leaves the
 * payment `Issued` (router flow step 8, docs/architecture.md); it never throws.
 */
export function decodeX402Receipt(header: string): Decoded<X402Receipt> {
  if (header.length > MAX_HEADER_CHARS) return invalid('receipt header too long');
  const text = decodeBase64(header.trim());
  if (text === undefined) return invalid('receipt is not base64 of UTF-8 text');
  const json = parseJson(text);
  if (!json.ok) return invalid('receipt is not base64 of JSON');
  const parsed = SettlementReceipt.safeParse(json.value);
  if (!parsed.success) return invalid(`receipt: ${issue(parsed.error)}`);
  const r = parsed.data;
  const txHash = r.success && TX_HASH.test(r.transaction) ? (r.transaction as Hex) : undefined;
  return decoded({ ...r, txHash });
}
