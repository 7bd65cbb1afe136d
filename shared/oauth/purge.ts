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
// - idle or expired page sessions, user-code guess windows and device authorization rate windows once over.
// The purge runs every 10 minutes (admin/jobs/oauth-purge.ts), so each row outlives its bound by at most that.
import type { Config } from '../../config/index.js';
import type { ServiceContext } from '../context.js';
import { GUESS_WINDOW_SECS } from './guess-limit.js';

const HOUR_MS = 3_600_000;
const GRACE_MS = 24 * HOUR_MS;
/** Rows deleted per statement: bounds how long one purge holds the write lock. */
const BATCH = 500;

/** table, key column, the condition that makes a row purgeable, its parameters. */
type Target = readonly [string, string, string, (now: Date, config: Config) => Date[]];

const ago = (now: Date, ms: number) => new Date(now.getTime() - ms);

const TARGETS: readonly Target[] = [
  ['oauth_code', 'code_hash', 'expires_at < ?', (now) => [ago(now, GRACE_MS)]],
  [
    'oauth_device_code',
    'device_code_hash',
    "expires_at < ? and status = 'pending' and last_polled_at is null",
    (now) => [now],
  ],
  ['oauth_device_code', 'device_code_hash', "expires_at < ? and status = 'pending'", (now) => [ago(now, HOUR_MS)]],
  ['oauth_device_code', 'device_code_hash', 'expires_at < ?', (now) => [ago(now, GRACE_MS)]],
  ['oauth_refresh_token', 'token_hash', 'expires_at < ?', (now) => [ago(now, GRACE_MS)]],
  [
    'oauth_page_session',
    'session_hash',
    'expires_at < ? or last_seen_at < ?',
    (now, c) => [now, ago(now, c.OAUTH_PAGE_SESSION_IDLE_SECS * 1000)],
  ],
  ['oauth_user_code_attempts', 'user_id', 'window_started_at < ?', (now) => [ago(now, GUESS_WINDOW_SECS * 1000)]],
  [
    'oauth_device_rate',
    'bucket',
    'window_started_at < ?',
    (now, c) => [ago(now, c.OAUTH_DEVICE_AUTH_WINDOW_SECS * 1000)],
  ],
];

/** Deletes what is past keeping, in batches; resolves with the number of rows deleted. */
export async function purgeOAuth(ctx: ServiceContext, now: Date, maxBatches = 100): Promise<number> {
  let total = 0;
  for (const [table, key, condition, params] of TARGETS) {
    for (let i = 0; i < maxBatches; i++) {
      const sql = `delete from ${table} where ${key} in (select ${key} from ${table} where ${condition} limit ?)`;
      const n = await ctx.db.sql.transaction((tx) => tx.run(sql, [...params(now, ctx.config), BATCH]));
      total += n;
      if (n < BATCH) break;
    }
  }
  return total;
}
