// RFC 8628 §5.1: user codes are short enough to guess, so the wrong guesses of each user are limited. Every
// lookup first takes an attempt from the user's window by ONE statement (an upsert that starts a new window once
// the old one is over); a lookup that finds its code gives the attempt back. So at most MAX_WRONG_GUESSES wrong
// guesses are checked per window in any number of processes, however many arrive at once.
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { giveGuessBackIn, takeGuessIn } from './store/rate-windows.js';

export const MAX_WRONG_GUESSES = 10;
export const GUESS_WINDOW_SECS = 600;

/** Takes one attempt; 429 BCK.OAUTH.0021 with Retry-After when the window's attempts are used up. */
async function takeAttempt(ctx: ServiceContext, userId: string): Promise<void> {
  const now = ctx.now();
  const windowOver = new Date(now.getTime() - GUESS_WINDOW_SECS * 1000);
  const window = await ctx.db.sql.transaction((tx) => takeGuessIn(tx, userId, now, windowOver));
  if (Number(window.count) <= MAX_WRONG_GUESSES) return;
  const endsAt = window.windowStartedAt.getTime() + GUESS_WINDOW_SECS * 1000;
  const retryAfter = Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000));
  throw new AppError('BCK.OAUTH.0021', {
    details: `too many wrong user codes: try again in ${retryAfter} seconds`,
    params: { retryAfterSecs: retryAfter },
    headers: { 'retry-after': String(retryAfter) },
  });
}

async function giveBack(ctx: ServiceContext, userId: string): Promise<void> {
  await ctx.db.sql.transaction((tx) => giveGuessBackIn(tx, userId));
}

/** Runs `lookup` as one guess of `userId`: a found code (non-undefined) costs nothing. */
export async function asGuess<T>(
  ctx: ServiceContext,
  userId: string,
  lookup: () => Promise<T | undefined>,
): Promise<T | undefined> {
  await takeAttempt(ctx, userId);
  const found = await lookup();
  if (found !== undefined) await giveBack(ctx, userId);
  return found;
}
