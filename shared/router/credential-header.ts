import { type CredentialHeader, credentialHeaderRefusal } from '../upstream/index.js';
import { InvariantError } from '../errors/invariant.js';

/**
 * The signed payment's header as the outbound module attaches it (after scrubbing, so it replaces any caller field
 * of that name): x402 `payment-signature` / `x-payment`, MPP `authorization` or the field the challenge's `header`
 * parameter names (mppx `Payment-Authorization`). The name was accepted while choosing (router/steps/choose.ts, before
 * the payment was issued); a refusal here is a bug in that check, never the merchant's doing.
 */
export function toCredentialHeader(h: { name: string; value: string }): CredentialHeader {
  const refused = credentialHeaderRefusal(h.name);
  if (refused !== undefined) throw new InvariantError(`unexpected credential header ${h.name}: ${refused}`);
  return { name: h.name.toLowerCase(), value: h.value };
}
