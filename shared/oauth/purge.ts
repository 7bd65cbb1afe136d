// The admin process deletes what the OAuth flows leave behind once it can matter to no one. Codes, device codes
// and refresh tokens are kept a day past their expiry first: until then a late redemption is still recognized
// (a replay still revokes its grant; a device still hears `expired_token` rather than `invalid_grant`). Grants
// and delegations are never purged: they are the record of what a user consented to and what was spent.
import type { ServiceContext } from '../context.js';
import type { Logger } from '../log.js';
import { type StopPeriodic, startPurge } from '../periodic.js';
import { GUESS_WINDOW_SECS } from './guess-limit.js';

const GRACE_MS = 86_400_000;
/** Rows deleted per statement: bounds how long one purge holds the write lock. */
const BATCH = 500;

/** table, key column, the condition that makes a row purgeable, its parameters. */
type Target = readonly [string, string, string, (now: Date, idleSecs: number) => Date[]];

const TARGETS: readonly Target[] = [
  ['oauth_code', 'code_hash', 'expires_at < ?', (now) => [new Date(now.getTime() - GRACE_MS)]],
  ['oauth_device_code', 'device_code_hash', 'expires_at < ?', (now) => [new Date(now.getTime() - GRACE_MS)]],
  ['oauth_refresh_token', 'token_hash', 'expires_at < ?', (now) => [new Date(now.getTime() - GRACE_MS)]],
  [
    'oauth_page_session',
    'session_hash',
    'expires_at < ? or last_seen_at < ?',
    (now, idleSecs) => [now, new Date(now.getTime() - idleSecs * 1000)],
  ],
  [
    'oauth_user_code_attempts',
    'user_id',
    'window_started_at < ?',
    (now) => [new Date(now.getTime() - GUESS_WINDOW_SECS * 1000)],
  ],
];

/** Deletes what is past keeping, in batches; resolves with the number of rows deleted. */
export async function purgeOAuth(ctx: ServiceContext, now: Date, maxBatches = 100): Promise<number> {
  let total = 0;
  for (const [table, key, condition, params] of TARGETS) {
    for (let i = 0; i < maxBatches; i++) {
      const sql = `delete from ${table} where ${key} in (select ${key} from ${table} where ${condition} limit ?)`;
      const n = await ctx.db.sql.transaction((tx) =>
        tx.run(sql, [...params(now, ctx.config.OAUTH_PAGE_SESSION_IDLE_SECS), BATCH]),
      );
      total += n;
      if (n < BATCH) break;
    }
  }
  return total;
}

/** Runs the purge every `intervalMs` in the admin process; returns its stop function. */
export function startOAuthPurge(ctx: ServiceContext, log: Logger, intervalMs = 600_000): StopPeriodic {
  return startPurge(log, 'expired OAuth codes, tokens and sessions', intervalMs, () => purgeOAuth(ctx, ctx.now()));
}
