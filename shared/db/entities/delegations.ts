import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/**
 * What a delegation row's status may hold: Active or Revoked. Expired and Exhausted are derived on read from
 * expiresAt and the spent amount (delegations/responses.ts), so no job has to flip them and they are never stored.
 */
export const DELEGATION_STORED_STATUSES = ['Active', 'Revoked'] as const;
export type DelegationStoredStatus = (typeof DELEGATION_STORED_STATUSES)[number];

/** A capped, expiring spending authority, charged only through the spend module (shared/spend). */
export const Delegation = defineEntity({
  name: 'Delegation',
  tableName: 'delegation',
  indexes: [{ properties: ['userId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    userId: p.string(),
    provider: p.string(),
    status: p.enum(DELEGATION_STORED_STATUSES),
    currency: p.string(),
    spendingLimitCents: p.type(Int64Type),
    amountSpentCents: p.type(Int64Type).default(0),
    transactionCount: p.integer().default(0),
    /** Checksummed addresses the router may pay; null = any. */
    allowedRecipients: p.json<string[]>().nullable(),
    planId: p.integer().nullable(),
    apiKeyId: p.string().nullable(),
    providerPaymentMethodId: p.string().nullable(),
    /** An organization wallet shared with `groupId` that pays instead of the user's own wallet; each spend is
     * charged to that group's budget in the delegation's currency too. */
    orgWalletId: p.string().nullable(),
    groupId: p.string().nullable(),
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** Append-only: one row per reserve (positive) or release (negative) against a delegation. */
export const DelegationTransaction = defineEntity({
  name: 'DelegationTransaction',
  tableName: 'delegation_transaction',
  indexes: [{ properties: ['delegationId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    delegationId: p.string(),
    kind: p.string(),
    amountCents: p.type(Int64Type),
    reference: p.string().nullable(),
    description: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
