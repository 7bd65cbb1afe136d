// Wire shapes of x402 v1 and v2 as the router meets them: a merchant's 402 and its receipt header, and the
// payment payload we send back. zod schemas with inferred types of the same name (coinbase/x402
// core/src/schemas habit). Bounded everywhere: a 402 is written by a stranger.
//
// Decoding is deliberately two-level. The envelope (`PaymentRequiredV1/V2`) only checks what every offer has;
// each `accepts[i]` is then checked by the chooser against `ExactEvmOption`, so one exotic option (another
// scheme, a Solana asset) is "not fundable" rather than a malformed 402. No schema here transforms a value:
// `accepts[i]` must reach the merchant again exactly as it was offered (v2 compares `accepted` field by field).
import { z } from 'zod';

/** Largest `PAYMENT-REQUIRED` header value accepted (characters of base64). */
export const MAX_HEADER_CHARS = 64 * 1024;
/** Largest v1 402 body accepted (characters of JSON). */
export const MAX_BODY_CHARS = 256 * 1024;
/** Most options one 402 may offer; more is refused before any option is looked at. */
export const MAX_ACCEPTS = 64;

/** A 20-byte hex address in any letter case (EIP-55 checksum not required on input). */
export const HexAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
/** A canonical decimal uint256 (no sign, no leading zeros): BigInt(s).toString() === s. */
export const UintString = z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'must be a canonical decimal integer');
export const Bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes of hex');
export const Signature65 = z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'must be a 65-byte hex signature');

/** v2 `ResourceInfo` (x402 v2 spec §"PaymentRequired"): echoed verbatim in the payment payload. */
export const ResourceInfo = z.looseObject({
  url: z.string().max(4096),
  description: z.string().max(5000).optional(),
  mimeType: z.string().max(200).optional(),
});
export type ResourceInfo = z.infer<typeof ResourceInfo>;

export const Extensions = z.record(z.string().max(200), z.unknown());
export type Extensions = z.infer<typeof Extensions>;

/** One offered option before the chooser looks at it: any JSON object. */
export const OfferedOption = z.looseObject({});
export type OfferedOption = z.infer<typeof OfferedOption>;

/** x402 v1 402 body: `{x402Version: 1, error?, accepts: [...]}` (x402-express@1 `paymentMiddleware`). */
export const PaymentRequiredV1 = z.looseObject({
  x402Version: z.literal(1),
  accepts: z.array(OfferedOption).min(1).max(MAX_ACCEPTS),
});
export type PaymentRequiredV1 = z.infer<typeof PaymentRequiredV1>;

/** x402 v2 `PAYMENT-REQUIRED` header, decoded: `{x402Version: 2, error?, resource, accepts, extensions?}`. */
export const PaymentRequiredV2 = z.looseObject({
  x402Version: z.literal(2),
  resource: ResourceInfo.optional(),
  accepts: z.array(OfferedOption).min(1).max(MAX_ACCEPTS),
  extensions: Extensions.optional(),
});
export type PaymentRequiredV2 = z.infer<typeof PaymentRequiredV2>;

/**
 * An `exact` EVM option the router can fund, v1 or v2 field names: v1 says `maxAmountRequired`, v2 `amount`
 * (the mode A body may carry either: POST /router/payments).
 */
export const ExactEvmOption = z.looseObject({
  scheme: z.literal('exact'),
  network: z.string().min(1).max(64),
  amount: UintString.optional(),
  maxAmountRequired: UintString.optional(),
  asset: HexAddress,
  payTo: HexAddress,
  maxTimeoutSeconds: z.number().int().positive().max(1_000_000_000).optional(),
  extra: z
    .looseObject({
      name: z.string().max(200).optional(),
      version: z.string().max(50).optional(),
      assetTransferMethod: z.string().max(50).optional(),
    })
    .nullish(),
});
export type ExactEvmOption = z.infer<typeof ExactEvmOption>;

/** The EIP-3009 authorization inside a payment payload: every integer a decimal string. */
export const AuthorizationWire = z.object({
  from: HexAddress,
  to: HexAddress,
  value: UintString,
  validAfter: UintString,
  validBefore: UintString,
  nonce: Bytes32,
});
export type AuthorizationWire = z.infer<typeof AuthorizationWire>;

export const ExactEvmPayload = z.object({ signature: Signature65, authorization: AuthorizationWire });

/** `X-PAYMENT` (v1): `{x402Version: 1, scheme, network, payload}` (x402@1 exact/evm `preparePaymentHeader`). */
export const PaymentPayloadV1 = z.object({
  x402Version: z.literal(1),
  scheme: z.string().max(64),
  network: z.string().max(64),
  payload: ExactEvmPayload,
});
export type PaymentPayloadV1 = z.infer<typeof PaymentPayloadV1>;

/** `PAYMENT-SIGNATURE` (v2): `{x402Version: 2, payload, extensions?, resource?, accepted}` (@x402/core client). */
export const PaymentPayloadV2 = z.object({
  x402Version: z.literal(2),
  payload: ExactEvmPayload,
  extensions: Extensions.optional(),
  resource: ResourceInfo.optional(),
  accepted: OfferedOption,
});
export type PaymentPayloadV2 = z.infer<typeof PaymentPayloadV2>;

/**
 * `PAYMENT-RESPONSE` (v2) / `X-PAYMENT-RESPONSE` (v1): the facilitator's settle response, base64 JSON
 * (@x402/core `encodePaymentResponseHeader`, x402@1 `settleResponseHeader`).
 */
export const SettlementReceipt = z.looseObject({
  success: z.boolean(),
  transaction: z.string().max(200),
  network: z.string().max(64),
  payer: z.string().max(200).optional(),
  errorReason: z.string().max(500).optional(),
});
export type SettlementReceipt = z.infer<typeof SettlementReceipt>;
