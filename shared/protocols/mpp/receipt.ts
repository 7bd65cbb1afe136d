// `Payment-Receipt` (draft-ietf-httpauth-payment §5.3; mppx Receipt.ts): base64url of JSON
// `{method, reference, status: "success", timestamp, externalId?, ...}`. For the `evm` method `reference` is the
// settlement transaction hash. Failures are not receipts (they are a 402 with Problem Details), so a receipt
// that does not parse leaves the payment `Issued` (router flow step 8, docs/architecture.md). Never throws.
import type { Hex } from 'viem';
import { z } from 'zod';
import { type Decoded, decodeBase64Url, decoded, invalid, parseJson } from '../encoding.js';

export const RECEIPT_HEADER = 'Payment-Receipt';
const MAX_RECEIPT_CHARS = 8 * 1024;

export const Receipt = z.looseObject({
  method: z.string().max(64),
  reference: z.string().max(512),
  status: z.literal('success'),
  timestamp: z.string().max(64),
  externalId: z.string().max(512).optional(),
});
export type Receipt = z.infer<typeof Receipt>;

export interface DecodedReceipt extends Receipt {
  /** `reference` when it is an EVM transaction hash. */
  readonly txHash: Hex | undefined;
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function deserialize(header: string): Decoded<DecodedReceipt> {
  if (typeof header !== 'string') return invalid('not a string');
  if (header.length > MAX_RECEIPT_CHARS) return invalid('receipt too long');
  const text = decodeBase64Url(header.trim());
  if (text === undefined) return invalid('receipt is not base64url of UTF-8 text');
  const json = parseJson(text);
  if (!json.ok) return invalid('receipt is not base64url of JSON');
  const parsed = Receipt.safeParse(json.value);
  if (!parsed.success) return invalid('receipt does not have the Payment-Receipt shape');
  const r = parsed.data;
  return decoded({ ...r, txHash: TX_HASH.test(r.reference) ? (r.reference as Hex) : undefined });
}
