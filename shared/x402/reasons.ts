// Machine-readable reasons of `isValid: false` / `success: false` (x402 facilitator naming: invalidReason,
// errorReason), in one place (coinbase/x402 mechanisms/evm/.../errors.ts habit). The unlisted-plan reason is
// the catalogue message of BCK.PROTOCOL.0062, as the interface requires (listing-flag table, Errors rule 1).
import { catalogue } from '../errors/catalogue.js';

export const Reason = {
  /** Not base64, not JSON, or not the x402 permission shape. */
  invalidToken: 'invalid_x402_access_token',
  /** The signed fields name no permission (a changed plan, resource, agent, nonce, owner ...). */
  permissionNotFound: 'permission_not_found',
  /** The token's signature is not the one issued, or does not recover to the permission owner. */
  invalidSignature: 'invalid_permission_signature',
  permissionRevoked: 'permission_revoked',
  /** No element of paymentRequired.accepts matches the permission's scheme, network, plan (and agent). */
  requirementsMismatch: 'payment_requirements_mismatch',
  /** The caller owns neither the plan nor the agent the permission is bound to. */
  notAuthorized: 'caller_not_authorized_for_permission',
  /** The plan was detached from the agent the permission is bound to. */
  planNotAttached: 'plan_not_attached_to_agent',
  insufficientCredits: 'insufficient_credits',
  unlistedPlan: catalogue['BCK.PROTOCOL.0062'].message,
} as const;

export type Reason = (typeof Reason)[keyof typeof Reason];
