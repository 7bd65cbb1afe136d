// Sessions of the consent and device pages. The browser holds a random token in an HttpOnly, SameSite=Strict
// cookie; a signed-in session is the token's SHA-256 in `oauth_page_session`, ended by sign-out, by
// OAUTH_PAGE_SESSION_IDLE_SECS without a request, or after SESSION_MAX_SECS in all. Signing in always issues a new
// token (a token planted before sign-in, session fixation, never becomes a session).
//
// CSRF tokens are bound to the cookie: HMAC-SHA256 keyed by the cookie token. A page's form carries it; a POST is
// accepted only with the cookie and its matching token, so another site can neither read the token nor forge it
// (SameSite=Strict already keeps the cookie off cross-site POSTs; the token does not rely on that alone).
import { createHmac } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { randomToken, secretsEqual, sha256Hex } from '../crypto/hashing.js';
import { deletePageSession, insertPageSession, pageSessionUser, touchPageSession } from './store/page-sessions.js';

/** A session lasts at most half a day, however active. */
export const SESSION_MAX_SECS = 12 * 3600;

export const newBrowserToken = (): string => randomToken(32);

export const csrfTokenOf = (browserToken: string): string =>
  createHmac('sha256', browserToken).update('payroute/page-csrf/v1').digest('base64url');

/** Whether `submitted` is the CSRF token of the browser holding `browserToken` (constant time). */
export function csrfMatches(browserToken: string | undefined, submitted: unknown): boolean {
  if (browserToken === undefined || typeof submitted !== 'string' || submitted === '') return false;
  return secretsEqual(csrfTokenOf(browserToken), submitted);
}

/** The signed-in user of a browser token, refreshing the idle timer; undefined when none or ended. */
export async function sessionUser(ctx: ServiceContext, browserToken: string | undefined): Promise<string | undefined> {
  if (browserToken === undefined) return undefined;
  const now = ctx.now();
  const idleSince = new Date(now.getTime() - ctx.config.OAUTH_PAGE_SESSION_IDLE_SECS * 1000);
  const sessionHash = sha256Hex(browserToken);
  const em = ctx.db.em();
  // One conditional UPDATE both checks (not idle, not past its end) and extends the session.
  const touched = await touchPageSession(em, sessionHash, idleSince, now);
  if (touched !== 1) return undefined;
  return pageSessionUser(em, sessionHash);
}

/** Signs `userId` in: a new session under a new browser token, which the caller sets as the cookie. */
export async function signIn(ctx: ServiceContext, userId: string): Promise<string> {
  const token = newBrowserToken();
  const now = ctx.now();
  await insertPageSession(ctx.db.em(), {
    sessionHash: sha256Hex(token),
    userId,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + SESSION_MAX_SECS * 1000),
    createdAt: now,
  });
  return token;
}

export async function signOut(ctx: ServiceContext, browserToken: string | undefined): Promise<void> {
  if (browserToken === undefined) return;
  await deletePageSession(ctx.db.em(), sha256Hex(browserToken));
}
