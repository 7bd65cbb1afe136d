import type { Principal } from '../accounts/api-keys.js';
import { Delegation } from '../db/entities/index.js';
import { effectiveStatus } from '../delegations/records.js';
import { AppError } from '../errors/app-error.js';
import type { RouterContext } from './context.js';
import type { DelegationRow } from './pay.js';

/**
 * The caller's own erc4337 delegation, for early refusal and for choosing (currency, allowed recipients). The
 * reservation's conditional UPDATE decides the spend; this read only refuses what cannot succeed.
 */
export async function spendableDelegation(rc: RouterContext, principal: Principal, delegationId: string): Promise<DelegationRow> {
  const d = await rc.ctx.db.em().findOne(Delegation, { id: delegationId, userId: principal.userId });
  if (d === null) throw new AppError('BCK.ROUTER.0003', 'delegation not found', { delegationId });
  if (d.provider !== 'erc4337') throw new AppError('BCK.ROUTER.0001', 'the router pays with erc4337 delegations only', { delegationId });
  if (d.apiKeyId != null && d.apiKeyId !== principal.apiKeyId) {
    throw new AppError('BCK.ROUTER.0003', 'this API key may not spend against the delegation', { delegationId });
  }
  const status = effectiveStatus(d, rc.ctx.now());
  if (status !== 'Active') throw new AppError('BCK.ROUTER.0003', `delegation is ${status.toLowerCase()}`, { delegationId });
  return d;
}
