// x402 v1 and v2 for the router: decode a merchant's 402, choose the option to fund (router flow step 5, docs/architecture.md),
// build the authorization to sign and the credential header, and read the settlement receipt.
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
// Every decoder returns a `Decoded<T>` union and never throws (test/protocols.fuzz.test.ts).
import { createHash } from 'node:crypto';
import { type Address, type Hex, getAddress } from 'viem';
import type { z } from 'zod';
import type { Config } from '../../config/index.js';
import { type Asset, NETWORKS, type Network } from '../assets.js';
import { MAX_INT64 } from '../money.js';
import { type TransferAuthorization, randomNonce } from './eip3009.js';
import { type Decoded, decodeBase64, decoded, encodeBase64, invalid, isJsonObject, parseJson } from './encoding.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from './json-depth.js';
import { serialize as serializeRequest } from './mpp/payment-request.js';
import { payeeRefusal } from './payee.js';
import { ChoiceReason, type NoChoice, type Rejection, clip, noChoice } from './reasons.js';
import {
  type AuthorizationWire,
  ExactEvmOption,
  type Extensions,
  MAX_ACCEPTS,
  MAX_BODY_CHARS,
  MAX_HEADER_CHARS,
  type OfferedOption,
  PaymentRequiredV1,
  PaymentRequiredV2,
  type ResourceInfo,
  SettlementReceipt,
} from './x402-schemas.js';

export type X402Version = 1 | 2;
type Environment = Config['ENVIRONMENT'];

/** Header names (x402 v2 spec "HTTP transport"; x402@1 `X-PAYMENT`). Node lowercases incoming names. */
export const X402Headers = {
  paymentRequired: 'PAYMENT-REQUIRED',
  credential: { 1: 'X-PAYMENT', 2: 'PAYMENT-SIGNATURE' },
  receipt: { 1: 'X-PAYMENT-RESPONSE', 2: 'PAYMENT-RESPONSE' },
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Decoding the 402

/** Summarises a zod failure in one short line: the first issue's path and message. */
function issue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
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
// Choosing (router flow step 5, docs/architecture.md)

export interface X402ChooseOptions {
  readonly environment: Environment;
  /**
   * ROUTER_FUNDED_NETWORKS: narrows the environment's networks (CAIP-2 `eip155:84532` or v1 name `base-sepolia`).
   * Undefined means every network of the environment.
   */
  readonly fundedNetworks?: readonly string[] | undefined;
  /** The delegation's allowedRecipients; undefined means any recipient. */
  readonly allowedRecipients?: readonly string[] | undefined;
  /** The wallet that pays: an option paying it is refused (payee.ts); the zero address is refused regardless. */
  readonly payer?: string | undefined;
  /** When an organization wallet pays: the spending member's own wallet, refused as a payee too (payee.ts). */
  readonly spender?: string | undefined;
  /**
   * The x402 version the offer came as: its options must use that version's fields (v1: a network name such as
   * `base-sepolia` and `maxAmountRequired`; v2: CAIP-2 `eip155:<id>` and `amount`). Undefined: either.
   */
  readonly version?: 1 | 2 | undefined;
}

export interface X402Choice {
  readonly type: 'chosen';
  /** Position in `accepts`. */
  readonly index: number;
  /** `accepts[index]` exactly as offered: v2 echoes it as `accepted`. */
  readonly option: OfferedOption;
  readonly network: Network;
  readonly asset: Asset;
  /** The exact amount to sign: v1 `maxAmountRequired`, v2 `amount`. */
  readonly amount: bigint;
  readonly payTo: Address;
  readonly maxTimeoutSeconds: number | undefined;
}

/** Our network entry for an x402 network name in this environment (CAIP-2 or v1 name), if it is funded. */
export function fundedNetwork(
  network: string,
  o: Pick<X402ChooseOptions, 'environment' | 'fundedNetworks'>,
): Network | undefined {
  const ours = NETWORKS[o.environment];
  const names: readonly string[] = [ours.caip2, ours.name];
  if (!names.includes(network)) return undefined;
  if (o.fundedNetworks !== undefined && !o.fundedNetworks.some((n) => names.includes(n))) return undefined;
  return ours;
}

export function recipientAllowed(payTo: string, allowed: readonly string[] | undefined): boolean {
  if (allowed === undefined) return true;
  const p = payTo.toLowerCase();
  return allowed.some((a) => a.toLowerCase() === p);
}

type Judged = { ok: true; choice: X402Choice } | { ok: false; rejection: Rejection };

function judge(index: number, raw: unknown, o: X402ChooseOptions): Judged {
  const reject = (reason: ChoiceReason, detail: string): Judged => ({
    ok: false,
    rejection: { index, reason, detail },
  });
  if (!isJsonObject(raw)) return reject(ChoiceReason.malformedOption, 'not an object');
  if (raw.scheme !== 'exact') return reject(ChoiceReason.unsupportedScheme, `scheme ${clip(raw.scheme)}`);
  if (typeof raw.network !== 'string') return reject(ChoiceReason.malformedOption, 'network: must be a string');
  const network = fundedNetwork(raw.network, o);
  if (network === undefined) return reject(ChoiceReason.networkNotFunded, `network ${clip(raw.network)}`);
  // The credential is built for the declared version, and a merchant of the other version cannot read it (x402-express
  // 1.x parses only X-PAYMENT with v1 names, @x402 v2 only PAYMENT-SIGNATURE; @x402/evm refuses a non-CAIP-2
  // network): an option in the other version's fields is refused before anything is signed or charged.
  if (o.version === 2 && (raw.network !== network.caip2 || raw.amount === undefined)) {
    return reject(
      ChoiceReason.malformedOption,
      'an x402 v2 option names its network in CAIP-2 (eip155:<id>) and its price in amount',
    );
  }
  if (o.version === 1 && (raw.network !== network.name || raw.maxAmountRequired === undefined)) {
    return reject(
      ChoiceReason.malformedOption,
      `an x402 v1 option names its network (${network.name}) and its price in maxAmountRequired`,
    );
  }

  const parsed = ExactEvmOption.safeParse(raw);
  if (!parsed.success) return reject(ChoiceReason.malformedOption, issue(parsed.error));
  const opt = parsed.data;
  // We sign EIP-3009 only; an option that asks for Permit2 expects a different payload.
  const method = opt.extra?.assetTransferMethod;
  if (method !== undefined && method !== 'eip3009')
    return reject(ChoiceReason.unsupportedScheme, `assetTransferMethod ${clip(method)}`);
  if (opt.amount !== undefined && opt.maxAmountRequired !== undefined && opt.amount !== opt.maxAmountRequired) {
    return reject(ChoiceReason.malformedOption, 'amount and maxAmountRequired differ');
  }
  const amountText = opt.amount ?? opt.maxAmountRequired;
  if (amountText === undefined) return reject(ChoiceReason.malformedOption, 'amount: required');

  const asset = network.assets.find((a) => a.address.toLowerCase() === opt.asset.toLowerCase());
  if (asset === undefined) return reject(ChoiceReason.unknownAsset, `asset ${opt.asset} on ${network.caip2}`);
  // The EIP-712 domain is part of what is signed: a name or version other than the token's own makes a signature
  // the token rejects (Base USDC is "USD Coin"/"2", Base Sepolia USDC "USDC"/"2").
  const name = opt.extra?.name;
  const version = opt.extra?.version;
  if (name !== asset.eip712.name || version !== asset.eip712.version) {
    return reject(
      ChoiceReason.eip712DomainMismatch,
      `${asset.symbol} on ${network.caip2} is ${asset.eip712.name}/${asset.eip712.version}, offered ${clip(name ?? '(none)')}/${clip(version ?? '(none)')}`,
    );
  }
  const amount = BigInt(amountText);
  if (amount <= 0n || amount > MAX_INT64) return reject(ChoiceReason.amountOutOfRange, `amount ${clip(amountText)}`);
  const payee = payeeRefusal(opt.payTo, o.payer, o.spender);
  if (payee !== undefined) return reject(payee.reason, payee.detail);
  if (!recipientAllowed(opt.payTo, o.allowedRecipients))
    return reject(ChoiceReason.recipientNotAllowed, `payTo ${opt.payTo}`);
  return {
    ok: true,
    choice: {
      type: 'chosen',
      index,
      option: raw,
      network,
      asset,
      amount,
      payTo: getAddress(opt.payTo),
      maxTimeoutSeconds: opt.maxTimeoutSeconds,
    },
  };
}

/**
 * Picks the option to fund: scheme `exact`, a funded network of the environment, a known asset whose
 * `extra.name/version` equal our EIP-712 table (else BCK.ROUTER.0012), a positive amount that fits 64 bits, a
 * pay-to that is neither the zero address nor the payer and that the delegation allows. Prefers USDC, then the
 * merchant's order.
 */
export function chooseX402Option(accepts: readonly unknown[], o: X402ChooseOptions): X402Choice | NoChoice {
  const rejected: Rejection[] = [];
  let best: X402Choice | undefined;
  const n = Math.min(accepts.length, MAX_ACCEPTS);
  for (let i = 0; i < n; i++) {
    const j = judge(i, accepts[i], o);
    if (!j.ok) {
      rejected.push(j.rejection);
      continue;
    }
    if (best === undefined || (best.asset.symbol !== 'USDC' && j.choice.asset.symbol === 'USDC')) best = j.choice;
  }
  return best ?? noChoice(rejected, 'x402 option');
}

// ---------------------------------------------------------------------------------------------------------------
// Building the credential

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

/**
 * mppx's route binding of an x402 payment (mppx x402/client/Exact.ts `withNonceSalt`, x402/internal/RouteBinding.ts,
 * checked by x402/server/EvmCharge.ts `bindCredential`): a v2 offer whose `extensions` carry `mppx` (an mppx merchant
 * advertising x402) is answered as mppx's own client answers it. `extensions.mppx.info.nonce` gets a random 32-byte
 * salt; `resource` is `{ url }`; and the EIP-3009 nonce is sha256(base64url(JCS(accepted)) | ...(resource) |
 * ...(extensions)), which binds the authorization to that route. An mppx merchant checks the binding whenever it is
 * present, and on scoped routes with `routeBinding: 'required'` refuses a payment without it. The salt keeps the
 * nonce unpredictable and unique, as a random one is. Undefined for any other offer (extensions echoed verbatim).
 */
export function mppxRouteBinding(
  accepted: OfferedOption,
  resource: ResourceInfo | undefined,
  extensions: Extensions | undefined,
): { nonce: Hex; resource: ResourceInfo; extensions: Extensions } | undefined {
  const mppx = extensions?.mppx;
  if (extensions === undefined || resource === undefined || !isJsonObject(mppx) || !isJsonObject(mppx.info))
    return undefined;
  // mppx hashes the extensions as its schema parses them (unknown keys stripped): bind only the exact shape it
  // advertises ({ mppx: { info, schema } }); anything else is echoed verbatim and unbound, as before.
  if (Object.keys(extensions).length !== 1 || Object.keys(mppx).some((k) => k !== 'info' && k !== 'schema'))
    return undefined;
  const salted: Extensions = {
    ...extensions,
    mppx: { ...mppx, info: { ...mppx.info, nonce: randomNonce().slice(2) } },
  };
  const bound = { url: resource.url };
  const input = [serializeRequest(accepted), serializeRequest(bound), serializeRequest(salted)].join('|');
  return {
    nonce: `0x${createHash('sha256').update(input, 'utf8').digest('hex')}`,
    resource: bound,
    extensions: salted,
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
 * test/protocols-x402.test.ts compares our bytes with the official clients' for the same inputs.
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
