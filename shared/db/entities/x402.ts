import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

/** A permission is Active until revoked; settle burns only `where status = 'Active'` (x402/settle.ts). */
export const PERMISSION_STATUSES = ['Active', 'Revoked'] as const;
export type PermissionStatus = (typeof PERMISSION_STATUSES)[number];

/** A delegated x402 permission; the primary key is the EIP-712 typed-data hash (the permission id). */
export const X402Permission = defineEntity({
  name: 'X402Permission',
  tableName: 'x402_permission',
  indexes: [{ properties: ['userId', 'createdAt'] }],
  properties: {
    permissionHash: p.string().primary(),
    userId: p.string(),
    ownerAddress: p.string(),
    scheme: p.string(),
    network: p.string(),
    planId: p.integer(),
    agentId: p.string().nullable(),
    httpVerb: p.string().nullable(),
    resourceUrl: p.text(),
    resourceDescription: p.text().nullable(),
    delegationId: p.string().nullable(),
    nonce: p.string(),
    /** SHA-256 (hex) of the signature as issued; the signature itself is never stored (it completes the token). */
    signatureHash: p.string(),
    status: p.enum(PERMISSION_STATUSES),
    usedCredits: p.type(Int64Type).default(0),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** One settle per (permission, agentRequestId): the unique key makes a repeat return the first result. */
export const X402Settlement = defineEntity({
  name: 'X402Settlement',
  tableName: 'x402_settlement',
  uniques: [{ properties: ['permissionHash', 'agentRequestId'] }],
  properties: {
    id: p.string().primary(),
    permissionHash: p.string(),
    agentRequestId: p.string(),
    creditsRedeemed: p.type(Int64Type),
    orderId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
