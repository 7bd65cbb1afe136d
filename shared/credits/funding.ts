// Whether a delegation can pay for one order of a plan: the plan's price in cents, the currency rule (the spend
// module's: usd/usdc pays USDC, eur/eurc pays EURC, nothing else is fundable) and the delegation's state and cap.
// This is a prediction for permission creation, verify and the auto-order's early refusal; the spend itself is
// decided by the spend module's conditional UPDATE.
import type { Config } from '../../config/index.js';
import { type Asset, NETWORKS } from '../assets.js';
import type { PlanRow } from './lookup.js';
import { atomicToCentsCeil, fromColumn, sum } from '../money.js';
import { currencyPays, describeRefusal, predictDelegationRefusal } from '../spend/index.js';

export interface PlanPrice {
  readonly atomic: bigint;
  /** ceil(cents(atomic)): what one order draws from a delegation cap. */
  readonly cents: bigint;
  /** The stablecoin the plan is priced in; undefined when it is no known asset of the environment. */
  readonly asset: Asset | undefined;
  /** The card charge split per receiver; the parts sum to `cents` exactly (telescoping ceilings). */
  readonly payees: readonly { readonly address: string; readonly cents: bigint }[];
}

export function planPrice(plan: PlanRow, environment: Config['ENVIRONMENT']): PlanPrice {
  const amounts = plan.amounts.map((a) => fromColumn(a));
  const atomic = sum(amounts);
  const token = plan.tokenAddress.toLowerCase();
  const asset = NETWORKS[environment].assets.find((a) => a.address.toLowerCase() === token);
  // Payee i gets ceil(prefix_i) - ceil(prefix_{i-1}): no cent is lost or invented across receivers.
  const payees: { address: string; cents: bigint }[] = [];
  let prefix = 0n;
  let charged = 0n;
  amounts.forEach((amount, i) => {
    prefix += amount;
    const upTo = atomicToCentsCeil(prefix);
    payees.push({ address: plan.receivers[i] ?? '', cents: upTo - charged });
    charged = upTo;
  });
  return { atomic, cents: atomicToCentsCeil(atomic), asset, payees };
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export interface DelegationSnapshot {
  readonly id: string;
  readonly provider: string;
  readonly status: string;
  readonly currency: string;
  readonly spendingLimitCents: bigint;
  readonly amountSpentCents: bigint;
  readonly planId?: number | null | undefined;
  readonly allowedRecipients?: readonly string[] | null | undefined;
  readonly expiresAt: Date;
  readonly orgWalletId?: string | null | undefined;
}

export type Fundability = { type: 'fundable' } | { type: 'unfundable'; reason: string };

/**
 * `spender`: the wallet of the delegation's owner, to whom the credits go. An organization wallet never pays a plan
 * whose receivers include it: that would move the organization's money to the member spending it.
 */
export function delegationCanPay(
  d: DelegationSnapshot,
  plan: PlanRow,
  price: PlanPrice,
  now: Date,
  spender: string,
): Fundability {
  // The state first (revoked, expired), the cap last: the charge's own conditions, predicted from the snapshot.
  const state = predictDelegationRefusal(d, 0n, now);
  if (state !== undefined) return { type: 'unfundable', reason: describeRefusal('delegation', state) };
  if (d.planId != null && d.planId !== plan.id)
    return { type: 'unfundable', reason: 'the delegation is restricted to another plan' };
  if (d.orgWalletId != null && price.payees.some((p) => sameAddress(p.address, spender)))
    return { type: 'unfundable', reason: "an organization wallet does not pay its member's own wallet" };
  const allowed = d.allowedRecipients;
  if (allowed != null && price.payees.some((p) => !allowed.some((a) => sameAddress(a, p.address)))) {
    return { type: 'unfundable', reason: 'a receiver of the plan is not in allowedRecipients of the delegation' };
  }
  if (price.cents > 0n) {
    if (price.asset === undefined) {
      return { type: 'unfundable', reason: `plan ${plan.id} is not priced in a stablecoin a delegation can pay` };
    }
    if (!currencyPays(d.currency, price.asset.symbol)) {
      return {
        type: 'unfundable',
        reason: `a ${d.currency} delegation cannot pay a plan priced in ${price.asset.symbol}`,
      };
    }
  }
  const cap = predictDelegationRefusal(d, price.cents, now);
  if (cap !== undefined) return { type: 'unfundable', reason: describeRefusal('delegation', cap) };
  return { type: 'fundable' };
}
