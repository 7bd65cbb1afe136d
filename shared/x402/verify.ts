// POST /x402/verify: may this x402 access token pay `maxAmount` credits for this request? Never
// consumes anything (no burn, no reserve, no order). Answers with the x402 facilitator's naming:
// `{ isValid, invalidReason?, invalidMessage?, payer?, network? }`.
//
// An unlisted plan is always `isValid: false` with the catalogue message of BCK.PROTOCOL.0062 as the reason and
// no `code` field (interface, listing-flag table and Errors rule 1).
import type { ServiceContext } from '../context.js';
import type { ActingUser } from '../auth/caller.js';
import { creditBalance } from '../credits/store/lots.js';
import type { PlanRow } from '../credits/lookup.js';
import { emSql } from '../db/sql.js';
import { findOwnDelegation } from '../delegations/store.js';
import { AppError } from '../errors/app-error.js';
import { orgOrderPayerIn } from '../organizations/spending.js';
import { balanceOf } from '../settlement/token-ledger.js';
import { type PresentedPermission, checkPermission } from './check-permission.js';
import { delegationCanPay, planPrice } from '../credits/funding.js';
import type { PermissionRow } from './store.js';
import { Reason } from './reasons.js';

export type VerifyResponse =
  | { isValid: true; payer: string; network: string }
  | { isValid: false; invalidReason: string; invalidMessage: string; payer?: string; network?: string };

export type Coverage = { type: 'covered' } | { type: 'by-order' } | { type: 'short'; message: string };

/**
 * Whether `maxAmount` can be paid now: by the credits held, or by one order against the permission's delegation
 * followed by a burn. For erc4337 the custodial wallet pays the order, so its token balance must cover the price.
 */
export async function coverage(
  ctx: ServiceContext,
  permission: PermissionRow,
  plan: PlanRow,
  maxAmount: bigint,
): Promise<Coverage> {
  const em = ctx.db.em();
  const now = ctx.now();
  const balance = await creditBalance(em, plan.id, permission.ownerAddress, now);
  if (balance >= maxAmount) return { type: 'covered' };
  const short = `${permission.ownerAddress} holds ${balance} credits of plan ${plan.id}; ${maxAmount} needed`;
  if (permission.delegationId == null)
    return { type: 'short', message: `${short} and the permission names no delegation` };
  if (balance + plan.creditsAmount < maxAmount) {
    return { type: 'short', message: `${short}, more than one order of the plan grants` };
  }
  const delegation = await findOwnDelegation(em, permission.userId, permission.delegationId);
  if (delegation === null) return { type: 'short', message: `${short} and the delegation is gone` };
  const price = planPrice(plan, ctx.config.ENVIRONMENT);
  const fundable = delegationCanPay(delegation, plan, price, now, permission.ownerAddress);
  if (fundable.type === 'unfundable')
    return { type: 'short', message: `${short} and the delegation cannot pay for an order: ${fundable.reason}` };
  // The wallet an order would pay from: the owner's, or the organization wallet of the delegation while the
  // organization still allows the member to spend from it (settle checks it again, locked, in its transaction).
  let payerAddress = permission.ownerAddress;
  if (delegation.orgWalletId != null && delegation.groupId != null) {
    const org = { orgWalletId: delegation.orgWalletId, groupId: delegation.groupId, currency: delegation.currency };
    try {
      payerAddress = (await orgOrderPayerIn(emSql(em), org, permission.userId)).address;
    } catch (err) {
      if (err instanceof AppError) return { type: 'short', message: `${short} and ${err.details}` };
      throw err;
    }
  }
  if (permission.scheme === 'svc:erc4337' && price.atomic > 0n) {
    const funds = await balanceOf(ctx, payerAddress, plan.tokenAddress);
    if (funds < price.atomic) return { type: 'short', message: `${short} and the wallet cannot pay for an order` };
  }
  return { type: 'by-order' };
}

export async function verifyPermission(
  ctx: ServiceContext,
  caller: ActingUser,
  input: PresentedPermission & { maxAmount: bigint },
): Promise<VerifyResponse> {
  const checked = await checkPermission(ctx, caller, input);
  if (checked.type === 'invalid') {
    const { reason, message, payer, network } = checked;
    return {
      isValid: false,
      invalidReason: reason,
      invalidMessage: message,
      ...(payer === undefined ? {} : { payer }),
      ...(network === undefined ? {} : { network }),
    };
  }
  const { permission, plan } = checked;
  const who = { payer: permission.ownerAddress, network: permission.network };
  if (!plan.listed) {
    return {
      isValid: false,
      invalidReason: Reason.unlistedPlan,
      invalidMessage: `plan ${plan.id} is unlisted`,
      ...who,
    };
  }
  const cover = await coverage(ctx, permission, plan, input.maxAmount);
  if (cover.type === 'short')
    return { isValid: false, invalidReason: Reason.insufficientCredits, invalidMessage: cover.message, ...who };
  return { isValid: true, ...who };
}
