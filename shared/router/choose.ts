// Step 5: detect and choose what to pay, with the delegation's restrictions and the operator's settings.
import { getAddress } from 'viem';
import { AppError } from '../errors/app-error.js';
import { type Asset, NETWORKS } from '../assets.js';
import { type PaymentChoice, type UpstreamAnswer, choosePayment } from '../protocols/payment.js';
import type { NoChoice } from '../protocols/reasons.js';
import type { RouterContext } from './context.js';
import type { DelegationRow } from './pay.js';

export function chooseOptions(rc: RouterContext, delegation: DelegationRow) {
  const c = rc.ctx.config;
  const env = NETWORKS[c.ENVIRONMENT];
  const mppAssets: Asset[] | undefined =
    c.ROUTER_MPP_ASSETS === undefined
      ? undefined
      : env.assets.filter((a) => (c.ROUTER_MPP_ASSETS ?? '').split(',').some((x) => getAddress(x) === a.address));
  return {
    environment: c.ENVIRONMENT,
    fundedNetworks: c.ROUTER_FUNDED_NETWORKS?.split(','),
    allowedRecipients: delegation.allowedRecipients ?? undefined,
    mppAssets,
  };
}

export function refusal(none: NoChoice): AppError {
  return new AppError(none.code, none.message, { reason: none.reason });
}

/** Chooses from a merchant's 402 answer; nothing fundable -> 400 naming why. */
export function chooseFromAnswer(rc: RouterContext, delegation: DelegationRow, answer: UpstreamAnswer): PaymentChoice {
  const r = choosePayment(answer, chooseOptions(rc, delegation));
  if (r.type === 'none') throw refusal(r);
  return r;
}
