import { z } from 'zod';
import { EvmAddress } from '../address.js';
import { LimitCents } from '../money.js';
import { CURRENCIES } from '../spend/currency.js';
import { line, wholeNumber } from '../text.js';

export const FIAT_PROVIDERS = ['stripe', 'braintree', 'visa'] as const;
export const PROVIDERS = ['erc4337', ...FIAT_PROVIDERS] as const;

export type Provider = (typeof PROVIDERS)[number];
export type DelegationStatus = 'Active' | 'Revoked' | 'Expired' | 'Exhausted';

/** Ten years. */
export const MAX_DURATION_SECS = 10 * 366 * 86_400;

export const CreateDelegationBody = z
  .object({
    provider: z.enum(PROVIDERS),
    spendingLimitCents: LimitCents,
    durationSecs: z.number().int().positive().max(MAX_DURATION_SECS),
    currency: z.enum(CURRENCIES).default('usd'),
    allowedRecipients: z.array(EvmAddress).min(1).max(100).optional(),
    planId: z
      .union([z.number().int().positive(), z.string().regex(/^[1-9][0-9]{0,9}$/)])
      .transform(Number)
      .optional(),
    apiKeyId: z.uuid().optional(),
    providerPaymentMethodId: line(200).min(1).optional(),
    /** An organization wallet shared with one of the caller's groups: it pays instead of the caller's wallet. */
    organizationWalletId: z.uuid().optional(),
    /** The group whose budget is charged; needed when the wallet is shared with several of the caller's groups. */
    groupId: z.uuid().optional(),
  })
  .strict()
  .refine((b) => b.groupId === undefined || b.organizationWalletId !== undefined, {
    message: 'groupId names the group of an organizationWalletId',
    path: ['groupId'],
  })
  .refine((b) => b.organizationWalletId === undefined || b.provider === 'erc4337', {
    message: 'an organization wallet backs erc4337 delegations only',
    path: ['organizationWalletId'],
  });

export type CreateDelegationInput = z.output<typeof CreateDelegationBody>;

export const ListDelegationsQuery = z.object({
  page: wholeNumber(1, 1_000_000).default(1),
  offset: wholeNumber(1, 100).default(10),
  accessible: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  status: z.enum(['Active', 'Revoked', 'Expired', 'Exhausted']).optional(),
});
