// Every statement on oauth_device_code (device authorization requests, both codes stored as SHA-256), all through
// the entity manager: a request is decided once (pending -> approved or denied) in the entity manager's transaction
// that creates the grant, and redeemed once (approved -> redeemed) in the one that stores the refresh token, each by
// ONE conditional UPDATE whose affected-row count decides; a poll records itself by a compare-and-set UPDATE. So the
// insert (in the transaction that takes from the rate windows, store/rate-windows.ts) and the purge go through it too.
import type { InferEntity } from '@mikro-orm/core';
import { OAuthDeviceCode } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';
import { deleteBatch } from './purge-batch.js';

export type DeviceCodeRow = InferEntity<typeof OAuthDeviceCode>;

/**
 * Inserts a pending, never polled request at once, in the caller's transaction. A user code already stored fails
 * the insert with a unique violation (`isUniqueViolation`).
 */
export async function insertDeviceCode(
  em: Em,
  row: Omit<DeviceCodeRow, 'status' | 'userId' | 'grantId' | 'lastPolledAt'>,
): Promise<void> {
  await em.insert(OAuthDeviceCode, { ...row, status: 'pending', userId: null, grantId: null, lastPolledAt: null });
}

export const findDeviceCode = (em: Em, deviceCodeHash: string): Promise<DeviceCodeRow | null> =>
  em.findOne(OAuthDeviceCode, { deviceCodeHash });

/** The request a user code names while it is pending and not expired at `now`. */
export const findPendingByUserCode = (em: Em, userCodeHash: string, now: Date): Promise<DeviceCodeRow | null> =>
  em.findOne(OAuthDeviceCode, { userCodeHash, status: 'pending', expiresAt: { $gt: now } });

export type DeviceDecision =
  | { readonly status: 'denied'; readonly userId: string }
  | { readonly status: 'approved'; readonly userId: string; readonly grantId: string };

/** Records the decision if the request is still pending and not expired at `now`: 1 for the one that decides. */
export const decidePendingDeviceCode = (
  em: Em,
  deviceCodeHash: string,
  now: Date,
  decision: DeviceDecision,
): Promise<number> =>
  em.nativeUpdate(OAuthDeviceCode, { deviceCodeHash, status: 'pending', expiresAt: { $gt: now } }, { ...decision });

/**
 * Records a poll if no other poll recorded itself since `seen` was read (compare-and-set on the poll time and the
 * interval): 1 when this poll is the one recorded. `next.intervalSecs` only when the interval grows (slow_down).
 */
export const recordDevicePoll = (
  em: Em,
  deviceCodeHash: string,
  seen: { readonly lastPolledAt: Date | null; readonly intervalSecs: number },
  next: { readonly lastPolledAt: Date; readonly intervalSecs?: number },
): Promise<number> =>
  em.nativeUpdate(
    OAuthDeviceCode,
    { deviceCodeHash, lastPolledAt: seen.lastPolledAt, intervalSecs: seen.intervalSecs },
    { ...next },
  );

/** Redeems an approved request: 1 for the one redemption that wins, else 0. */
export const redeemApprovedDeviceCode = (em: Em, deviceCodeHash: string): Promise<number> =>
  em.nativeUpdate(OAuthDeviceCode, { deviceCodeHash, status: 'approved' }, { status: 'redeemed' });

/** Which expired requests a purge batch deletes: pending and never polled; pending; any. */
export type DeviceCodePurge = 'never-used' | 'undecided' | 'any';

/** Deletes up to `limit` requests of the kind that expired before `before`, in one statement; how many it deleted. */
export function purgeDeviceCodes(em: Em, kind: DeviceCodePurge, before: Date, limit: number): Promise<number> {
  const expired = { expiresAt: { $lt: before } };
  const where =
    kind === 'never-used'
      ? { ...expired, status: 'pending' as const, lastPolledAt: null }
      : kind === 'undecided'
        ? { ...expired, status: 'pending' as const }
        : expired;
  return deleteBatch(em, OAuthDeviceCode, 'deviceCodeHash', where, limit);
}
