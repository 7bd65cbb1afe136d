// POST /oauth/device_authorization (RFC 8628 §3.1) is public, and each request stores a device code until it
// expires: without a bound, anyone could fill the table. Device authorizations are counted per client address (an
// IPv6 address by its /64) and per client, in fixed windows, in the database (`oauth_device_rate`): ONE upsert per
// bucket, in the transaction that inserts the device code. So the limits hold across every process on the database,
// parallel requests cannot overshoot them (each upsert waits on its bucket's row), and a refused request rolls back,
// leaving neither a device code nor a count. This endpoint is not a hot path: two small writes per code are cheap.
import type { SqlTx } from '../db/sql.js';
import { takeDeviceAuthorizationIn } from './store/rate-windows.js';

export interface DeviceRateLimits {
  readonly perAddress: number;
  readonly perClient: number;
  readonly windowSecs: number;
}

/** A bucket's window is used up: retry after `retryAfterSecs` (at least 1). */
export class DeviceRateLimited extends Error {
  constructor(
    readonly bucket: 'address' | 'client',
    readonly retryAfterSecs: number,
  ) {
    super(`too many device authorizations from this ${bucket}`);
    this.name = 'DeviceRateLimited';
  }
}

/**
 * Takes one from `bucket`'s window (a new window once the old one is over); when none is left, the seconds until
 * the window is over (the Retry-After of the refusal). Dynamic registration's per-address limit (registration.ts)
 * takes from its own buckets the same way.
 */
export async function take(
  tx: SqlTx,
  bucket: string,
  limit: number,
  windowSecs: number,
  now: Date,
): Promise<number | null> {
  const windowOver = new Date(now.getTime() - windowSecs * 1000);
  const window = await takeDeviceAuthorizationIn(tx, bucket, now, windowOver);
  if (window.count <= BigInt(limit)) return null;
  // The window may have been opened by a parallel request whose clock read a little later than ours (it held the
  // row while we waited), so what is left can exceed the window by that much: never promise more than one window.
  const endsAt = window.windowStartedAt.getTime() + windowSecs * 1000;
  return Math.min(windowSecs, Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)));
}

/**
 * Takes one device authorization from the address's bucket, then from the client's, inside the caller's
 * transaction (which must insert the device code and roll back on the throw). Every transaction takes the two
 * buckets in this order, so two of them cannot deadlock. Throws DeviceRateLimited for the first bucket used up.
 */
export async function takeDeviceAuthorization(
  tx: SqlTx,
  who: { readonly addressBucket: string; readonly clientId: string },
  limits: DeviceRateLimits,
  now: Date,
): Promise<void> {
  const byAddress = await take(tx, `address:${who.addressBucket}`, limits.perAddress, limits.windowSecs, now);
  if (byAddress !== null) throw new DeviceRateLimited('address', byAddress);
  const byClient = await take(tx, `client:${who.clientId}`, limits.perClient, limits.windowSecs, now);
  if (byClient !== null) throw new DeviceRateLimited('client', byClient);
}
