// GET /protocol/plans/{planId}/balance/{holderAddress}.
import type { ServiceContext } from '../context.js';
import { countUsersWithWallet } from '../accounts/store.js';
import { AppError } from '../errors/app-error.js';
import { toWire } from '../money.js';
import { creditBalance, hasHeldCredits } from './store/lots.js';
import { planOr404 } from './lookup.js';

export interface BalanceResult {
  planId: string;
  holderAddress: string;
  balance: string;
  isSubscriber: boolean;
}

/**
 * Balance of any existing plan (listed or not: subscribers of an unlisted plan keep reading it) for an address
 * that is an account's wallet or has held the plan's credits; any other address is 404 BCK.PROTOCOL.0005.
 * `holderAddress` must already be checksummed.
 */
export async function getBalance(
  ctx: ServiceContext,
  rawPlanId: string,
  holderAddress: string,
): Promise<BalanceResult> {
  const em = ctx.db.em();
  const plan = await planOr404(em, rawPlanId);
  const known =
    (await hasHeldCredits(em, plan.id, holderAddress)) || (await countUsersWithWallet(em, holderAddress)) > 0;
  if (!known) {
    throw new AppError('BCK.PROTOCOL.0005', {
      details: `${holderAddress} is not an account and has never held credits of plan ${plan.id}`,
      params: {
        holderAddress,
      },
    });
  }
  const balance = await creditBalance(em, plan.id, holderAddress, ctx.now());
  return { planId: String(plan.id), holderAddress, balance: toWire(balance), isSubscriber: balance > 0n };
}
