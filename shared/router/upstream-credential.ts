import type { PaymentCredential as UpstreamCredential } from '../upstream/index.js';

/** The credential header as the outbound module attaches it (after scrubbing, so it is the only one). */
export function upstreamCredential(c: { name: string; value: string }): UpstreamCredential {
  const name = c.name.toLowerCase();
  if (name === 'payment-signature' || name === 'x-payment' || name === 'authorization') return { name, value: c.value };
  throw new Error(`unexpected credential header ${c.name}`);
}
