// What the delegation endpoints answer (shared/delegations: the record of records.ts, create, revoke, journal).
import { z } from 'zod';
import type { DelegationRecord as DelegationRecordType } from '../../../shared/delegations/responses.js';
import { PROVIDERS } from '../../../shared/delegations/requests.js';
import type {
  createDelegation,
  listDelegationTransactions,
  revokeDelegation,
} from '../../../shared/delegations/delegations.js';
import { CURRENCIES } from '../../../shared/spend/currency.js';
import { Address, Decimal, type Fits, Id, Timestamp, named, pageOf } from './common.js';

export const DelegationRecord = named(
  'DelegationRecord',
  z.object({
    delegationId: Id,
    provider: z.enum(PROVIDERS),
    status: z.enum(['Active', 'Revoked', 'Expired', 'Exhausted']),
    spendingLimitCents: Decimal,
    amountSpentCents: Decimal,
    remainingBudgetCents: Decimal,
    currency: z.enum(CURRENCIES),
    transactionCount: z.number().int().nonnegative(),
    allowedRecipients: z.array(Address).nullable(),
    planId: z.string().nullable(),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    /** Set when the delegation is limited to one of the user's API keys. */
    apiKeyId: Id.optional(),
    /** Set when an organization wallet pays, charged to the group's budget. */
    organizationWalletId: Id.optional(),
    groupId: Id.nullable().optional(),
  }),
  'A spending delegation: a capped, expiring authority to spend for the user.',
);

export const DelegationCreated = named(
  'DelegationCreated',
  z.object({
    delegationId: Id,
    /** Fiat-backed providers only: a JWT by this service naming the delegation (verify with the JWKS). */
    delegationToken: z.string().optional(),
  }),
  "The new delegation's id.",
);

export const DelegationRevoked = named(
  'DelegationRevoked',
  z.object({ success: z.literal(true), delegationId: Id, status: z.literal('Revoked') }),
  'The delegation is revoked: the next spend against it fails in every process.',
);

export const DelegationPage = named(
  'DelegationPage',
  pageOf('delegations', DelegationRecord),
  'A page of delegations.',
);

export const DelegationTransaction = named(
  'DelegationTransaction',
  z.object({
    transactionId: z.string(),
    /** `reserve` charges the cap, `release` gives back. */
    kind: z.string(),
    amountCents: Decimal,
    reference: z.string().nullable(),
    description: z.string().nullable(),
    createdAt: Timestamp,
  }),
  "One entry of a delegation's journal.",
);

export const DelegationTransactionPage = named(
  'DelegationTransactionPage',
  pageOf('transactions', DelegationTransaction),
  "A page of a delegation's journal, newest first.",
);

export type DelegationRecordFits = Fits<typeof DelegationRecord, DelegationRecordType>;
export type DelegationCreatedFits = Fits<typeof DelegationCreated, Awaited<ReturnType<typeof createDelegation>>>;
export type DelegationRevokedFits = Fits<typeof DelegationRevoked, Awaited<ReturnType<typeof revokeDelegation>>>;
export type DelegationTransactionPageFits = Fits<
  typeof DelegationTransactionPage,
  Awaited<ReturnType<typeof listDelegationTransactions>>
>;
