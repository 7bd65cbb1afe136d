// The admin process deletes what the OAuth flows leave behind once it can matter to no one. Grants and delegations
// are never purged: they are the record of what a user consented to and what was spent. The rest:
// - authorization codes and refresh tokens: a day past expiry (a late redemption is still recognized as a replay
//   and revokes its grant);
// - device codes (RFC 8628), by what happened to them:
//   - never used (still `pending` and never polled: no device asked for it, no human decided it): deleted once
//     expired. Nobody is owed an answer about it, and these are what a flood of POST /oauth/device_authorization
//     leaves; a device whose first poll comes after that hears `invalid_grant` instead of `expired_token`;
//   - polled but never decided: an hour past expiry, so a polling device hears `expired_token` at its next poll
//     (its interval is seconds; an hour covers a device that slept);
//   - decided (approved, denied) or redeemed: a day past expiry (a replayed redeemed code still revokes its grant;
//     a late device still hears `expired_token`);
// - idle or expired page sessions, user-code guess windows and device authorization rate windows once over;
// - dynamically registered clients (RFC 7591) a day old that never got a grant: anyone may register one, and an MCP
//   host that registers on every connection leaves one behind each time. A client with a grant stays (the grant is
//   the record of a consent, and names it).
// The purge runs every 10 minutes (admin/jobs/oauth-purge.ts), so each row outlives its bound by at most that.
import type { ServiceContext } from '../context.js';
import { GUESS_WINDOW_SECS } from './guess-limit.js';
import { REGISTRATION_WINDOW_SECS } from './registration.js';
import { purgeUnusedDynamicClientsIn } from './store/clients.js';
import { purgeCodes } from './store/codes.js';
import { purgeDeviceCodes } from './store/device-codes.js';
import { purgePageSessions } from './store/page-sessions.js';
import { purgeDeviceRateWindowsIn, purgeGuessWindowsIn } from './store/rate-windows.js';
import { purgeRefreshTokens } from './store/refresh-tokens.js';

const HOUR_MS = 3_600_000;
const GRACE_MS = 24 * HOUR_MS;
/** Rows deleted per statement: bounds how long one purge holds the write lock. */
const BATCH = 500;

/** One kind of row past keeping at `now`: deletes up to `limit` of them by one statement; how many it deleted. */
type Target = (ctx: ServiceContext, now: Date, limit: number) => Promise<number>;

const ago = (now: Date, ms: number) => new Date(now.getTime() - ms);

const TARGETS: readonly Target[] = [
  (ctx, now, limit) => purgeCodes(ctx.db.em(), ago(now, GRACE_MS), limit),
  (ctx, now, limit) => purgeDeviceCodes(ctx.db.em(), 'never-used', now, limit),
  (ctx, now, limit) => purgeDeviceCodes(ctx.db.em(), 'undecided', ago(now, HOUR_MS), limit),
  (ctx, now, limit) => purgeDeviceCodes(ctx.db.em(), 'any', ago(now, GRACE_MS), limit),
  (ctx, now, limit) => purgeRefreshTokens(ctx.db.em(), ago(now, GRACE_MS), limit),
  (ctx, now, limit) =>
    purgePageSessions(ctx.db.em(), now, ago(now, ctx.config.OAUTH_PAGE_SESSION_IDLE_SECS * 1000), limit),
  (ctx, now, limit) =>
    ctx.db.sql.transaction((tx) => purgeGuessWindowsIn(tx, ago(now, GUESS_WINDOW_SECS * 1000), limit)),
  (ctx, now, limit) =>
    ctx.db.sql.transaction((tx) =>
      // The longer of the two windows in the table (device authorizations', dynamic registrations'): a window still
      // running is never purged, which would reset its count.
      purgeDeviceRateWindowsIn(
        tx,
        ago(now, Math.max(ctx.config.OAUTH_DEVICE_AUTH_WINDOW_SECS, REGISTRATION_WINDOW_SECS) * 1000),
        limit,
      ),
    ),
  (ctx, now, limit) => ctx.db.sql.transaction((tx) => purgeUnusedDynamicClientsIn(tx, ago(now, GRACE_MS), limit)),
];

/** Deletes what is past keeping, in batches; resolves with the number of rows deleted. */
export async function purgeOAuth(ctx: ServiceContext, now: Date, maxBatches = 100): Promise<number> {
  let total = 0;
  for (const purge of TARGETS) {
    for (let i = 0; i < maxBatches; i++) {
      const n = await purge(ctx, now, BATCH);
      total += n;
      if (n < BATCH) break;
    }
  }
  return total;
}
