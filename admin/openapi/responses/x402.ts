// What the x402 permission endpoints answer (shared/x402: the permission record, verify's and settle's
// facilitator-style results).
import { z } from 'zod';
import type { PermissionRecord as PermissionRecordType, revokePermission } from '../../../shared/x402/permissions.js';
import { PERMISSION_SCHEMES } from '../../../shared/x402/objects.js';
import type { SettleResponse } from '../../../shared/x402/settle.js';
import type { VerifyResponse } from '../../../shared/x402/verify.js';
import { Address, Decimal, type Fits, Network, Timestamp, named, pageOf } from './common.js';

const PermissionHash = z.string().regex(/^0x[0-9a-f]{64}$/);

export const PermissionRecord = named(
  'PermissionRecord',
  z.object({
    permissionHash: PermissionHash,
    planId: z.string(),
    agentId: z.string().optional(),
    httpVerb: z.string().optional(),
    scheme: z.enum(PERMISSION_SCHEMES),
    network: Network,
    ownerAddress: Address,
    delegationId: z.string().optional(),
    status: z.enum(['Active', 'Revoked']),
    usedCredits: Decimal,
    createdAt: Timestamp,
    resource: z.object({ url: z.string(), description: z.string().optional() }),
  }),
  'An x402 delegated permission (its token is shown once, when it is created).',
);

export const PermissionCreated = named(
  'PermissionCreated',
  PermissionRecord.extend({
    /** The bearer token an agent verifies and settles; shown only here. */
    x402AccessToken: z.string(),
  }),
  'The new permission and its access token.',
);

export const PermissionRevoked = named(
  'PermissionRevoked',
  z.object({ success: z.literal(true), permissionHash: PermissionHash, status: z.literal('Revoked') }),
  'The permission is revoked: settling it fails from now on.',
);

export const PermissionPage = named(
  'PermissionPage',
  pageOf('permissions', PermissionRecord),
  'A page of permissions.',
);

export const VerifyResult = named(
  'VerifyResult',
  z.union([
    z.object({ isValid: z.literal(true), payer: Address, network: Network }),
    z.object({
      isValid: z.literal(false),
      /** Machine-readable (shared/x402/reasons.ts). */
      invalidReason: z.string(),
      invalidMessage: z.string(),
      payer: Address.optional(),
      network: Network.optional(),
    }),
  ]),
  'Whether the permission can pay `maxAmount` now; verifying consumes nothing.',
);

export const SettleResult = named(
  'SettleResult',
  z.union([
    z.object({
      success: z.literal(true),
      payer: Address,
      /** The settlement's id. */
      transaction: z.string(),
      network: Network,
      creditsRedeemed: Decimal,
      remainingBalance: Decimal,
      /** Set when credits fell short and a plan was ordered against the permission's delegation first. */
      orderId: z.string().optional(),
      /** This agentRequestId was settled before: the first result. */
      duplicate: z.literal(true).optional(),
    }),
    z.object({
      success: z.literal(false),
      errorReason: z.string(),
      errorMessage: z.string(),
      payer: Address.optional(),
      transaction: z.literal(''),
      network: Network,
    }),
  ]),
  'The credits burnt for one agent request (once per agentRequestId), or why nothing was.',
);

export type PermissionRecordFits = Fits<typeof PermissionRecord, PermissionRecordType>;
export type PermissionRevokedFits = Fits<typeof PermissionRevoked, Awaited<ReturnType<typeof revokePermission>>>;
export type VerifyResultFits = Fits<typeof VerifyResult, VerifyResponse>;
export type SettleResultFits = Fits<typeof SettleResult, SettleResponse>;
