// Step 8: what the merchant's answer to the paid call says about the payment.
import * as Receipt from '../../protocols/mpp/receipt.js';
import { decodeX402Receipt } from '../../protocols/x402-decode.js';
import type { OutgoingHeaders } from '../../upstream/index.js';
import type { PaidOutcome } from '../steps/record.js';

export function headerOf(headers: OutgoingHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** A receipt settles; another 402 is a rejection; anything else (no or a malformed receipt) stays Issued. */
export function outcomeOf(protocol: string, status: number, headers: OutgoingHeaders): PaidOutcome {
  if (status === 402) return { type: 'rejected', reason: 'the merchant answered the paid call with 402 again' };
  if (protocol === 'mpp') {
    const h = headerOf(headers, Receipt.RECEIPT_HEADER);
    if (h === undefined) return { type: 'issued' };
    const r = Receipt.deserialize(h);
    return r.type === 'decoded' ? { type: 'settled', txHash: r.value.txHash } : { type: 'issued' };
  }
  const h = headerOf(headers, 'payment-response') ?? headerOf(headers, 'x-payment-response');
  if (h === undefined) return { type: 'issued' };
  const r = decodeX402Receipt(h);
  return r.type === 'decoded' && r.value.success ? { type: 'settled', txHash: r.value.txHash } : { type: 'issued' };
}
