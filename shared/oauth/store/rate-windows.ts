// Every statement on the fixed-window counters: oauth_device_rate (device authorizations per address and per
// client) and oauth_user_code_attempts (user-code guesses per user). Both in hand SQL, on the caller's transaction:
// a window is taken by ONE upsert that opens a new window once the old one is over and returns the count, which no
// entity manager call can write. A device authorization's upserts run on the entity manager's transaction that
// inserts its device code (through `emSql`), so a refusal rolls both back.
//
// Dates are bound as shared/db/sql.ts binds them (epoch milliseconds on SQLite, as MikroORM stores them there).
import { type SqlTx, int64, timestamp } from '../../db/sql.js';
import { InvariantError } from '../../errors/invariant.js';

/** A window's count after a take, and when the window opened. */
export interface WindowCount {
  readonly count: bigint;
  readonly windowStartedAt: Date;
}

const TAKE_DEVICE_AUTHORIZATION = `insert into oauth_device_rate (bucket, window_started_at, used) values (?, ?, 1)
     on conflict (bucket) do update set
       used = case when oauth_device_rate.window_started_at <= ? then 1 else oauth_device_rate.used + 1 end,
       window_started_at = case when oauth_device_rate.window_started_at <= ? then ?
                                else oauth_device_rate.window_started_at end
     returning used, window_started_at`;

/** Counts one device authorization in `bucket`'s window, opening a new window if it opened at `windowOver` or before. */
export async function takeDeviceAuthorizationIn(
  tx: SqlTx,
  bucket: string,
  now: Date,
  windowOver: Date,
): Promise<WindowCount> {
  const row = (await tx.all(TAKE_DEVICE_AUTHORIZATION, [bucket, now, windowOver, windowOver, now]))[0];
  if (row === undefined) throw new InvariantError('device rate upsert returned no row');
  return { count: int64(row.used), windowStartedAt: timestamp(row.window_started_at) };
}

const TAKE_GUESS = `insert into oauth_user_code_attempts (user_id, window_started_at, failures) values (?, ?, 1)
       on conflict (user_id) do update set
         failures = case when oauth_user_code_attempts.window_started_at <= ? then 1
                         else oauth_user_code_attempts.failures + 1 end,
         window_started_at = case when oauth_user_code_attempts.window_started_at <= ? then ?
                                  else oauth_user_code_attempts.window_started_at end
       returning failures, window_started_at`;

/** Counts one guess of `userId`, opening a new window if it opened at `windowOver` or before. */
export async function takeGuessIn(tx: SqlTx, userId: string, now: Date, windowOver: Date): Promise<WindowCount> {
  const row = (await tx.all(TAKE_GUESS, [userId, now, windowOver, windowOver, now]))[0];
  if (row === undefined) throw new InvariantError('attempt upsert returned no row');
  return { count: int64(row.failures), windowStartedAt: timestamp(row.window_started_at) };
}

/** Gives one guess of `userId` back (never below zero). */
export async function giveGuessBackIn(tx: SqlTx, userId: string): Promise<void> {
  await tx.run('update oauth_user_code_attempts set failures = failures - 1 where user_id = ? and failures > 0', [
    userId,
  ]);
}

/** Deletes up to `limit` device rate windows opened before `before`, in one statement; how many it deleted. */
export const purgeDeviceRateWindowsIn = (tx: SqlTx, before: Date, limit: number): Promise<number> =>
  tx.run(
    'delete from oauth_device_rate where bucket in (select bucket from oauth_device_rate where window_started_at < ? limit ?)',
    [before, limit],
  );

/** Deletes up to `limit` guess windows opened before `before`, in one statement; how many it deleted. */
export const purgeGuessWindowsIn = (tx: SqlTx, before: Date, limit: number): Promise<number> =>
  tx.run(
    'delete from oauth_user_code_attempts where user_id in (select user_id from oauth_user_code_attempts where window_started_at < ? limit ?)',
    [before, limit],
  );
