// What a human consents to: a consent type, a cap in one currency and a duration. Approving creates the grant and
// the capped, expiring delegation it is bound to, in the caller's unit of work, so they commit together with the
// code (or the device approval) that hands them to the connector.
//   commerce        an erc4337 delegation of the user's custodial wallet (or of an organization wallet the human
//                   spends, charged to their group's budget too): the connector pays merchants through the commerce
//                   route, within the cap.
//   account_access  a card-backed delegation (the sandbox card processor): the connector acts for the user on
//                   registry and credits reads, plan orders and card-delegation x402 permissions, within the cap.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ConsentType } from '../db/entities/index.js';
import type { Em } from '../db/sql.js';
import type { ServiceContext } from '../context.js';
import { newDelegation } from '../delegations/delegations.js';
import { AppError } from '../errors/app-error.js';
import { orgFundingFor } from '../organizations/spending.js';
import { CURRENCIES, type Currency } from '../spend/currency.js';
import { addGrant } from './store/grants.js';

/** Bounds of what a connector may ask for: $1,000,000 (in cents) and one year. */
export const MAX_CONSENT_CENTS = 100_000_000n;
export const MIN_DURATION_SECS = 60;
export const MAX_DURATION_SECS = 31_536_000;

/** A cap in cents: a JSON number or a decimal string (a form sends strings). */
export const ConsentCents = z
  .union([z.number().int().safe(), z.string().regex(/^[0-9]{1,12}$/)])
  .transform((v) => BigInt(v))
  .refine((v) => v >= 1n && v <= MAX_CONSENT_CENTS, `must be from 1 to ${MAX_CONSENT_CENTS}`);

export const ConsentDuration = z
  .union([z.number().int().safe(), z.string().regex(/^[0-9]{1,9}$/)])
  .transform(Number)
  .refine(
    (v) => v >= MIN_DURATION_SECS && v <= MAX_DURATION_SECS,
    `must be from ${MIN_DURATION_SECS} to ${MAX_DURATION_SECS}`,
  );

export const ConsentCurrency = z.enum(CURRENCIES);

/**
 * The terms of a request that names none (a device authorization, or an authorization request such as an MCP
 * host's, which knows nothing of caps): $10 in USD for a day, which the human sees, and may lower, before approving.
 */
export const DEFAULT_CONSENT_CENTS = 1000n;
export const DEFAULT_CONSENT_CURRENCY = 'usd' satisfies Currency;
export const DEFAULT_CONSENT_DURATION_SECS = 86_400;
/** The consent type of a request without `scope`: the capped one, which any client may ask for by default. */
export const DEFAULT_CONSENT_TYPE = 'commerce' satisfies ConsentType;

export interface ConsentTerms {
  readonly consentType: ConsentType;
  readonly spendingLimitCents: bigint;
  readonly currency: Currency;
  readonly durationSecs: number;
}

/** What each consent type lets a connector do, in words (the consent and device pages show it). */
export const CONSENT_WORDING: Readonly<Record<ConsentType, string>> = {
  commerce: 'Pay merchants from your wallet on your behalf, up to the cap, until the consent expires.',
  account_access:
    'Act for you on your account: read agents, plans and credits, and buy plans with your card, up to the cap, until the consent expires.',
};

/** The card processor provider of account-level delegations (the sandbox processor charges any fiat provider). */
const CARD_PROVIDER = 'stripe';

/**
 * The human may approve a commerce consent on an organization wallet they can spend (shared with an active group
 * they belong to: `group_id` names it when there are several). The connector then pays from that wallet, charged to
 * the group's budget and to the grant's cap, as a member's own delegation on the wallet is. Only the human chooses
 * it, at approval: a connector cannot ask for a wallet.
 */
export const ConsentWallet = z.object({
  organization_wallet_id: z.uuid().optional(),
  group_id: z.uuid().optional(),
});

export type OrgFunding = { readonly orgWalletId: string; readonly groupId: string };

/** The funding the human chose, checked as delegation/create checks it (404 BCK.ORG.0005 for a wallet out of reach). */
export async function consentFunding(
  ctx: ServiceContext,
  userId: string,
  consentType: ConsentType,
  wallet: z.output<typeof ConsentWallet>,
): Promise<OrgFunding | undefined> {
  if (wallet.organization_wallet_id === undefined) {
    if (wallet.group_id !== undefined)
      throw new AppError('BCK.HTTP.0400', { details: 'group_id: only with organization_wallet_id' });
    return undefined;
  }
  if (consentType !== 'commerce')
    throw new AppError('BCK.HTTP.0400', {
      details: 'organization_wallet_id: only a commerce consent pays from a wallet',
    });
  return orgFundingFor(ctx, userId, wallet.organization_wallet_id, wallet.group_id);
}

/**
 * Inserts the grant's delegation and adds the grant to `em`'s unit of work; the caller runs it inside
 * `em.transactional`, whose commit flushes the grant with the delegation.
 */
export async function newGrant(
  em: Em,
  who: { userId: string; clientId: string },
  terms: ConsentTerms,
  now: Date,
  funding?: OrgFunding,
): Promise<{ grantId: string; delegationId: string; expiresAt: Date }> {
  const delegation = await newDelegation(
    em,
    { userId: who.userId },
    {
      provider: terms.consentType === 'commerce' ? 'erc4337' : CARD_PROVIDER,
      spendingLimitCents: terms.spendingLimitCents,
      currency: terms.currency,
      durationSecs: terms.durationSecs,
      ...funding,
    },
    now,
  );
  const grantId = randomUUID();
  addGrant(em, {
    id: grantId,
    userId: who.userId,
    clientId: who.clientId,
    consentType: terms.consentType,
    delegationId: delegation.id,
    createdAt: now,
  });
  return { grantId, delegationId: delegation.id, expiresAt: delegation.expiresAt };
}
