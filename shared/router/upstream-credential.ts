import { type PaymentCredential as UpstreamCredential, credentialHeaderRefusal } from '../upstream/index.js';

/**
 * The credential header as the outbound module attaches it (after scrubbing, so it replaces any caller field of
 * that name): x402 `payment-signature` / `x-payment`, MPP `authorization` or the field the challenge's `header`
 * parameter names (mppx `Payment-Authorization`). The name was accepted while choosing (router/choose.ts, before
 * the payment was issued); a refusal here is a bug in that check, never the merchant's doing.
 */
export function upstreamCredential(c: { name: string; value: string }): UpstreamCredential {
  const refused = credentialHeaderRefusal(c.name);
  if (refused !== undefined) throw new Error(`unexpected credential header ${c.name}: ${refused}`);
  return { name: c.name.toLowerCase(), value: c.value };
}
