// POST /protocol/plans/mint and /protocol/plans/mintExpirable: the plan owner grants credits.
import type { ServiceContext } from '../context.js';
import { toWire } from '../money.js';
import type { ActingUser } from '../auth/caller.js';
import { creditBalance, mintLot } from './store/lots.js';
import { ownedPlanOr403 } from './lookup.js';
import type { MintBody } from './requests.js';

export interface MintResult {
  success: true;
  planId: string;
  holderAddress: string;
  amount: string;
  balance: string;
  /** Present for expirable credits: when this lot stops counting (ISO 8601). */
  expiresAt?: string;
}

/**
 * Mints a lot for the holder (any address: credits may be granted to a wallet that is not an account yet).
 * `durationSecs` makes the lot expire; without it the credits never expire. Only the plan owner may mint
 * (403 BCK.PROTOCOL.0010); listing does not matter.
 */
export async function mintCredits(
  ctx: ServiceContext,
  caller: ActingUser,
  input: MintBody & { durationSecs?: number },
): Promise<MintResult> {
  const plan = await ownedPlanOr403(ctx.db.em(), input.planId, caller);
  const now = ctx.now();
  const expiresAt = input.durationSecs === undefined ? null : new Date(now.getTime() + input.durationSecs * 1000);
  const balance = await ctx.db.em().transactional(async (tx) => {
    await mintLot(
      tx,
      {
        planId: plan.id,
        holderAddress: input.holderAddress,
        amount: input.amount,
        expiresAt,
        kind: expiresAt === null ? 'mint' : 'mint_expirable',
        reference: null,
      },
      now,
    );
    return creditBalance(tx, plan.id, input.holderAddress, now);
  });
  return {
    success: true,
    planId: String(plan.id),
    holderAddress: input.holderAddress,
    amount: toWire(input.amount),
    balance: toWire(balance),
    ...(expiresAt === null ? {} : { expiresAt: expiresAt.toISOString() }),
  };
}
