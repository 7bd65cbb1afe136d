import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/**
 * A capped, expiring spending authority. Stored status is Active or Revoked; Expired and Exhausted
 * are derived on read from expiresAt and the spent amount, so no job has to flip them.
 */
export const Delegation = defineEntity({
  name: 'Delegation',
  tableName: 'delegation',
  indexes: [{ properties: ['userId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    userId: p.string(),
    provider: p.string(),
    status: p.string(),
    currency: p.string(),
    spendingLimitCents: p.type(Int64Type),
    amountSpentCents: p.type(Int64Type).default(0),
    transactionCount: p.integer().default(0),
    /** Checksummed addresses the router may pay; null = any. */
    allowedRecipients: p.json<string[]>().nullable(),
    planId: p.integer().nullable(),
    apiKeyId: p.string().nullable(),
    providerPaymentMethodId: p.string().nullable(),
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
