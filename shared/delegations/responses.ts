import { toWire } from '../money.js';
import type { DelegationStatus } from './requests.js';

export interface DelegationRow {
  id: string;
  provider: string;
  status: string;
  currency: string;
  spendingLimitCents: bigint;
  amountSpentCents: bigint;
  transactionCount: number;
  allowedRecipients?: string[] | null | undefined;
  planId?: number | null | undefined;
  apiKeyId?: string | null | undefined;
  orgWalletId?: string | null | undefined;
  groupId?: string | null | undefined;
  expiresAt: Date;
  createdAt: Date;
}

/** Active/Revoked are stored; Expired and Exhausted follow from the clock and the spent amount. */
export function effectiveStatus(d: DelegationRow, now: Date): DelegationStatus {
  if (d.status === 'Revoked') return 'Revoked';
  if (d.expiresAt.getTime() <= now.getTime()) return 'Expired';
  if (d.amountSpentCents >= d.spendingLimitCents) return 'Exhausted';
  return 'Active';
}

export function delegationRecord(d: DelegationRow, now: Date) {
  return {
    delegationId: d.id,
    provider: d.provider,
    status: effectiveStatus(d, now),
    spendingLimitCents: toWire(d.spendingLimitCents),
    amountSpentCents: toWire(d.amountSpentCents),
    remainingBudgetCents: toWire(
      d.spendingLimitCents > d.amountSpentCents ? d.spendingLimitCents - d.amountSpentCents : 0n,
    ),
    currency: d.currency,
    transactionCount: d.transactionCount,
    allowedRecipients: d.allowedRecipients ?? null,
    planId: d.planId == null ? null : String(d.planId),
    expiresAt: d.expiresAt.toISOString(),
    createdAt: d.createdAt.toISOString(),
    ...(d.apiKeyId == null ? {} : { apiKeyId: d.apiKeyId }),
    ...(d.orgWalletId == null ? {} : { organizationWalletId: d.orgWalletId, groupId: d.groupId ?? null }),
  };
}

export type DelegationRecord = ReturnType<typeof delegationRecord>;
