// Who pays through the router: the user's API key (any of the user's erc4337 delegations it may spend) or a
// connector's commerce token (only its grant's delegation, through /router/commerce/route).
import type { ApiKeyCaller, CommerceCaller } from '../auth/caller.js';

export type RouterPrincipal = ApiKeyCaller | CommerceCaller;

/**
 * The claim scope of a requestId: the user's API-key calls share one ('') and each grant has its own (its
 * id), so at most one payment exists per (user, requestId) for keys and per (grant, requestId) for a connector.
 * Stored as router_payment.request_scope, whose unique key with user and requestId is the durable claim.
 */
export function requestScopeOf(p: RouterPrincipal): string {
  return p.kind === 'commerce' ? p.grantId : '';
}

/** Whose payments a caller reads: the user's all, or one grant's. */
export interface PaymentOwner {
  readonly userId: string;
  readonly grantId?: string | undefined;
}

export function paymentOwnerOf(p: RouterPrincipal): PaymentOwner {
  return p.kind === 'commerce' ? { userId: p.userId, grantId: p.grantId } : { userId: p.userId };
}

/** The columns that say who paid: the key, or the grant and its client. */
export function payerColumnsOf(p: RouterPrincipal) {
  return p.kind === 'commerce'
    ? { apiKeyId: null, grantId: p.grantId, clientId: p.clientId, requestScope: p.grantId }
    : { apiKeyId: p.apiKeyId, grantId: null, clientId: null, requestScope: '' };
}
