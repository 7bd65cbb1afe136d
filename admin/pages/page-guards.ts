// What a page request passes before its handler's work: a signed-in human for a page (else the sign-in page), and
// for a form post the CSRF token first, then the session it belongs to.
import type { ServiceContext } from '../../shared/context.js';
import { AppError } from '../../shared/errors/app-error.js';
import { csrfMatches, csrfTokenOf, sessionUser } from '../../shared/oauth/page-session.js';
import type { AdminRouterContext } from '../http/route.js';
import { browserToken, ensureBrowserToken, render } from './browser.js';
import { deviceCodeOf, submittedCsrf } from './forms.js';
import { reloadPage, signInPage } from './views.js';

/** Whether the browser-token cookie is marked Secure: when the service is on https. */
export const secureCookies = (ctx: ServiceContext): boolean => ctx.config.publicUrl.startsWith('https:');

/**
 * The signed-in user and the browser token, or undefined after answering with the sign-in page (which names the
 * user code a device page link carries, and returns to that link once signed in). A cross-site
 * navigation (the connector sent the human here) does not carry SameSite=Strict cookies: it is answered with a
 * page that reloads itself, a same-site navigation that does, instead of a sign-in page that would replace the
 * human's session cookie.
 */
export async function signedIn(
  ctx: ServiceContext,
  c: AdminRouterContext,
): Promise<{ userId: string; token: string } | undefined> {
  if (c.get('sec-fetch-site') === 'cross-site' && browserToken(c) === undefined) {
    render(c, reloadPage(c.originalUrl));
    return undefined;
  }
  const token = ensureBrowserToken(c, secureCookies(ctx));
  const userId = await sessionUser(ctx, token);
  if (userId === undefined) {
    const returnTo = c.originalUrl;
    render(c, signInPage({ csrf: csrfTokenOf(token), returnTo, deviceCode: deviceCodeOf(returnTo) }));
    return undefined;
  }
  return { userId, token };
}

/**
 * A form's CSRF token must be the one bound to this browser's cookie: else 403 BCK.OAUTH.0022. Checked first, on
 * the body as it came, before the form's schema: a form that did not come from our page is refused the same way
 * whatever else it holds (no token, an empty one, a forged one, another browser's).
 */
export function checkCsrf(c: AdminRouterContext): string {
  const token = browserToken(c);
  if (token === undefined || !csrfMatches(token, submittedCsrf(c.request.body))) throw new AppError('BCK.OAUTH.0022');
  return token;
}

/** The signed-in user of a form post, or 401 BCK.OAUTH.0007 (the session ended while the page was open). */
export async function formUser(ctx: ServiceContext, token: string): Promise<string> {
  const userId = await sessionUser(ctx, token);
  if (userId === undefined)
    throw new AppError('BCK.OAUTH.0007', { details: 'your session has ended: reload the page and sign in' });
  return userId;
}
