// x402 authorization: the EIP-3009 authorization to sign for a chosen option, and the credential header that
// carries it, built as the official clients build them (x402-decode.ts lists the references).
import { type Hex, getAddress } from 'viem';
import { type TransferAuthorization, randomNonce } from './eip3009.js';
import { encodeBase64 } from './encoding.js';
import { X402Headers, type X402Version } from './x402-decode.js';
import type { X402Choice } from './x402-offers.js';
import type { AuthorizationWire, Extensions, OfferedOption, ResourceInfo } from './x402-schemas.js';

/** Lower bound of the signed validity: verifiers demand validBefore >= now + 6 s at verify AND at settle time. */
export const MIN_VALIDITY_SECONDS = 30;
/** Upper bound: a leaked credential should not stay spendable for long (the merchant may ask for less). */
export const MAX_VALIDITY_SECONDS = 3600;
/** When the option names no maxTimeoutSeconds (mode A bodies may omit it). */
export const DEFAULT_VALIDITY_SECONDS = 300;
/** v1 clients back-date validAfter by 10 minutes against clock skew (x402@1 `preparePaymentHeader`). */
export const V1_VALID_AFTER_SKEW_SECONDS = 600;

/**
 * The EIP-3009 authorization for a chosen option, as the official clients fill it: value = the exact required
 * amount; validBefore = now + maxTimeoutSeconds (at least MIN_VALIDITY_SECONDS, at most `maxValiditySeconds`,
 * default MAX_VALIDITY_SECONDS); validAfter = now - 600
 * for v1 (x402@1) and 0 for v2 (@x402/evm `createEIP3009Payload`); a random 32-byte nonce.
 */
export function x402Authorization(input: {
  readonly version: X402Version;
  readonly choice: Pick<X402Choice, 'amount' | 'payTo' | 'maxTimeoutSeconds'>;
  readonly from: string;
  readonly nowSeconds?: number;
  readonly nonce?: Hex;
  /** The operator's cap on the window (ROUTER_MAX_AUTH_TTL_SECS); it wins over the lower bound too. */
  readonly maxValiditySeconds?: number;
}): TransferAuthorization {
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const window = Math.min(
    Math.max(input.choice.maxTimeoutSeconds ?? DEFAULT_VALIDITY_SECONDS, MIN_VALIDITY_SECONDS),
    input.maxValiditySeconds ?? MAX_VALIDITY_SECONDS,
  );
  return {
    from: getAddress(input.from),
    to: input.choice.payTo,
    value: input.choice.amount,
    validAfter: input.version === 1 ? BigInt(Math.max(0, now - V1_VALID_AFTER_SKEW_SECONDS)) : 0n,
    validBefore: BigInt(now + window),
    nonce: input.nonce ?? randomNonce(),
  };
}

/** The authorization as the payload carries it: integers as decimal strings, in the official clients' key order. */
export function authorizationWire(auth: TransferAuthorization, to?: string): AuthorizationWire {
  return {
    from: getAddress(auth.from),
    to: to ?? getAddress(auth.to),
    value: auth.value.toString(),
    validAfter: auth.validAfter.toString(),
    validBefore: auth.validBefore.toString(),
    nonce: auth.nonce,
  };
}

export type X402PaymentInput =
  | {
      readonly version: 1;
      /** The chosen `accepts[i]`: its scheme and network are echoed. */
      readonly option: OfferedOption;
      readonly authorization: TransferAuthorization;
      readonly signature: Hex;
    }
  | {
      readonly version: 2;
      /** The chosen `accepts[i]`, echoed verbatim as `accepted`. */
      readonly option: OfferedOption;
      /** The 402's `resource`, echoed verbatim when present. */
      readonly resource?: ResourceInfo | undefined;
      /** The 402's `extensions`, echoed verbatim when present. */
      readonly extensions?: Extensions | undefined;
      readonly authorization: TransferAuthorization;
      readonly signature: Hex;
    };

export interface X402Credential {
  /** `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2). */
  readonly name: string;
  /** Standard base64 with padding of the JSON payload. */
  readonly value: string;
}

/**
 * Builds the credential header exactly as the official clients do, key order included:
 * - v1 (x402@1 `preparePaymentHeader` + `signPaymentHeader` + `encodePayment`):
 *   `{x402Version: 1, scheme, network, payload: {signature, authorization: {from, to, value, validAfter,
 *   validBefore, nonce}}}`, with `to` the offered payTo as written;
 * - v2 (@x402/core `x402Client.createPaymentPayload` + @x402/evm `createEIP3009Payload`):
 *   `{x402Version: 2, payload: {authorization, signature}, extensions, resource, accepted}`.
 * test/protocols/protocols-x402.test.ts compares our bytes with the official clients' for the same inputs.
 */
export function buildX402Payment(input: X402PaymentInput): X402Credential {
  if (input.version === 1) {
    // x402@1 copies `payTo` as offered into `to`; the signature covers the address, not its letter case.
    const offered = input.option.payTo;
    const payTo =
      typeof offered === 'string' && offered.toLowerCase() === input.authorization.to.toLowerCase()
        ? offered
        : undefined;
    const body = {
      x402Version: 1,
      scheme: input.option.scheme,
      network: input.option.network,
      payload: { signature: input.signature, authorization: authorizationWire(input.authorization, payTo) },
    };
    return { name: X402Headers.credential[1], value: encodeBase64(JSON.stringify(body)) };
  }
  const body = {
    x402Version: 2,
    payload: { authorization: authorizationWire(input.authorization), signature: input.signature },
    extensions: input.extensions,
    resource: input.resource,
    accepted: input.option,
  };
  return { name: X402Headers.credential[2], value: encodeBase64(JSON.stringify(body)) };
}
