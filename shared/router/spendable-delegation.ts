// The router's check of the delegation a call names, before any money moves.
import type { RouterPrincipal } from './principal.js';
import { AppError } from '../errors/app-error.js';
import { delegationAccount, predictDelegationRefusal, refusalError } from '../spend/index.js';
import type { DelegationRow } from './delegation-snapshot.js';
import type { RouterServices } from './services.js';

/**
 * The caller's own erc4337 delegation (a connector's: its grant's), for early refusal and for choosing (currency, allowed recipients). The
 * issuance transaction's conditional UPDATE decides the spend; this only refuses what cannot succeed.
 */
export async function spendableDelegation(
  services: RouterServices,
  principal: RouterPrincipal,
  delegationId: string,
): Promise<DelegationRow> {
  const d = await services.delegations.get(principal.userId, delegationId);
  const account = delegationAccount(delegationId, principal.userId);
  if (d === null) throw refusalError(account, { reason: 'not_found' });
  if (d.provider !== 'erc4337')
    throw new AppError('BCK.ROUTER.0001', {
      details: 'the router pays with erc4337 delegations only',
      params: { delegationId },
    });
  // A key-bound delegation is spent only by its key (a grant's delegation is bound to no key).
  if (d.apiKeyId != null && (principal.kind !== 'apiKey' || d.apiKeyId !== principal.apiKeyId)) {
    throw new AppError('BCK.ROUTER.0003', {
      details: 'this API key may not spend against the delegation',
      params: { delegationId },
    });
  }
  // Any payment charges at least one cent: a cap with nothing left is refused here (as "exhausted").
  const refused = predictDelegationRefusal(d, 1n, services.ctx.now());
  if (refused !== undefined) throw refusalError(account, refused);
  return d;
}
