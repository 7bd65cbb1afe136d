// What a page answer carries besides its HTML: the security headers (a strict Content-Security-Policy with
// `frame-ancestors 'none'`: a framed consent page is the classic clickjacking attack), no caching, and the
// browser-token cookie (HttpOnly, SameSite=Strict, Secure when the service is on https).
import { newBrowserToken } from '../../shared/oauth/page-session.js';
import type { AdminRouterContext, RouteProtocol } from '../http/route.js';
import { classify } from '../middleware/error-handler.js';
import { type Html, STYLE_SOURCE } from './html.js';
import { errorPage } from './views.js';

export const COOKIE = 'payroute_page';
const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;

/** The browser token the request's cookie holds, if it is well-formed. */
export function browserToken(ctx: AdminRouterContext): string | undefined {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === COOKIE && value !== undefined && TOKEN_FORM.test(value)) return value;
  }
  return undefined;
}

export function setBrowserToken(ctx: AdminRouterContext, token: string, secure: boolean, maxAgeSecs: number): void {
  const attrs = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSecs}`, ...(secure ? ['Secure'] : [])];
  ctx.set('set-cookie', `${COOKIE}=${token}; ${attrs.join('; ')}`);
}

/** The request's browser token, or a new one set as the cookie (a first visit): CSRF tokens need one. */
export function ensureBrowserToken(ctx: AdminRouterContext, secure: boolean): string {
  const existing = browserToken(ctx);
  if (existing !== undefined) return existing;
  const token = newBrowserToken();
  setBrowserToken(ctx, token, secure, 12 * 3600);
  return token;
}

/**
 * Answers with a page. `formTargets` are the origins (or schemes) a form of this page may send the browser to
 * besides this one: the consent page's decision ends in a redirect to the connector, which `form-action` governs.
 */
export function render(ctx: AdminRouterContext, page: Html, status = 200, formTargets: readonly string[] = []): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set(
    'content-security-policy',
    [
      "default-src 'none'",
      `style-src ${STYLE_SOURCE}`,
      `form-action 'self'${formTargets.map((t) => ` ${t}`).join('')}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
  );
  ctx.set('x-frame-options', 'DENY');
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('cache-control', 'no-store');
  ctx.body = page.markup;
}

/** A redirect after a form (RFC 9110 §15.4.4: 303 makes the browser GET the target). */
export function seeOther(ctx: AdminRouterContext, location: string): void {
  ctx.set('cache-control', 'no-store');
  ctx.redirect(location); // sets Location and 302
  ctx.status = 303;
}

/** The pages' catch point: a client error is a page saying what went wrong, never a JSON envelope. */
export const PAGE_PROTOCOL: RouteProtocol = {
  body: 'form-or-json',
  writeError(ctx, err) {
    // The code and status the JSON envelope would carry (a body parser's 413 is BCK.HTTP.0413), on a page: a client
    // error, or the database being unavailable (503 with Retry-After: the person can try again in a moment).
    const shown = classify(err);
    const clientError = shown.httpStatus >= 400 && shown.httpStatus < 500;
    if (!clientError && shown.code !== 'BCK.DATABASE.0001') return false;
    ctx.set(shown.headers);
    // A body still arriving behind this answer (a 413's, a 415's) is drained or the connection closed, as for every
    // answer (admin/middleware/unread-body.ts): this catch point answers, the process's decides the connection.
    render(ctx, errorPage(shown.details, shown.code), shown.httpStatus);
    return true;
  },
};
