// The consent page (GET {WEB_APP_URL}/oauth/authorize, the discovery document's authorization_endpoint) and the
// device page (GET /device): server-rendered, no script. The human signs in with an API key; the page keeps a
// session (shared/oauth/page-session.ts). Every rule is the JSON endpoints' own: the pages call the same services
// (authorize.ts, device-decision.ts), so there is one implementation of what may be granted.
//
// Until the client and the redirect URI are known good, an error is a page and nothing is sent to the redirect
// URI (RFC 6749 §4.1.2.1); after that, errors go back to the connector as `error`, `error_description`, `state`
// and `iss` (RFC 9207).
import type { ParsedUrlQuery } from 'node:querystring';
import { PUBLIC } from '../../shared/auth/route-callers.js';
import { AppError } from '../../shared/errors/app-error.js';
import {
  AUTHORIZATION_FIELDS,
  type AuthorizationRequest,
  authorizationRequest,
  authorizationTarget,
  decide,
  redirectWith,
} from '../../shared/oauth/authorize.js';
import { decideDevice, deviceDetails } from '../../shared/oauth/device-decision.js';
import {
  SESSION_MAX_SECS,
  csrfMatches,
  csrfTokenOf,
  newBrowserToken,
  sessionUser,
  signIn,
  signOut,
} from '../../shared/oauth/page-session.js';
import { isSingleLine } from '../../shared/text.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, get, post, speaking } from '../http/route.js';
import { parse } from '../http/validate.js';
import {
  PAGE_PROTOCOL,
  browserToken,
  ensureBrowserToken,
  render,
  seeOther,
  setBrowserToken,
} from '../pages/browser.js';
import {
  ConsentForm,
  DeviceDecisionForm,
  DeviceLookupForm,
  SignInForm,
  SignOutForm,
  submittedCsrf,
} from '../pages/forms.js';
import { consentPage, deviceEntryPage, messagePage, reloadPage, signInPage } from '../pages/views.js';

/** The OAuth error a refused authorization request is reported to the connector as (RFC 6749 §4.1.2.1). */
function oauthErrorOf(err: AppError): string {
  if (err.code === 'BCK.OAUTH.0025') return 'unauthorized_client';
  if (err.code === 'BCK.OAUTH.0018' && 'scope' in err.params) return 'invalid_scope';
  return 'invalid_request';
}

const single = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length <= 1000 && isSingleLine(v) ? v : undefined;

/** Where the answer goes, as the human should read it: the host, or the scheme of an app's private-use URI. */
function destinationOf(redirectUri: string): { shown: string; formTarget: string } {
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') return { shown: url.host, formTarget: url.origin };
  return { shown: `the app (${url.protocol})`, formTarget: url.protocol };
}

export function pageRoutes({ ctx, credentials }: AdminDeps): AdminRoute[] {
  const secure = ctx.config.publicUrl.startsWith('https:');
  const issuer = ctx.config.publicUrl;

  /**
   * The signed-in user and the browser token, or undefined after answering with the sign-in page. A cross-site
   * navigation (the connector sent the human here) does not carry SameSite=Strict cookies: it is answered with a
   * page that reloads itself, a same-site navigation that does, instead of a sign-in page that would replace the
   * human's session cookie.
   */
  async function signedIn(c: AdminRouterContext): Promise<{ userId: string; token: string } | undefined> {
    if (c.get('sec-fetch-site') === 'cross-site' && browserToken(c) === undefined) {
      render(c, reloadPage(c.originalUrl));
      return undefined;
    }
    const token = ensureBrowserToken(c, secure);
    const userId = await sessionUser(ctx, token);
    if (userId === undefined) {
      render(c, signInPage({ csrf: csrfTokenOf(token), returnTo: c.originalUrl }));
      return undefined;
    }
    return { userId, token };
  }

  /**
   * A form's CSRF token must be the one bound to this browser's cookie: else 403 BCK.OAUTH.0022. Checked first, on
   * the body as it came, before the form's schema: a form that did not come from our page is refused the same way
   * whatever else it holds (no token, an empty one, a forged one, another browser's).
   */
  function checkCsrf(c: AdminRouterContext): string {
    const token = browserToken(c);
    if (token === undefined || !csrfMatches(token, submittedCsrf(c.request.body))) throw new AppError('BCK.OAUTH.0022');
    return token;
  }

  /** The signed-in user of a form post, or 401 BCK.OAUTH.0007 (the session ended while the page was open). */
  async function formUser(token: string): Promise<string> {
    const userId = await sessionUser(ctx, token);
    if (userId === undefined)
      throw new AppError('BCK.OAUTH.0007', { details: 'your session has ended: reload the page and sign in' });
    return userId;
  }

  function showConsent(c: AdminRouterContext, token: string, req: AuthorizationRequest, query: ParsedUrlQuery): void {
    const hidden: Record<string, string> = {};
    // The request's own fields go back with the decision, which is checked by the same rules again.
    for (const f of AUTHORIZATION_FIELDS) {
      const v = single(query[f]);
      if (v !== undefined) hidden[f] = v;
    }
    const dest = destinationOf(req.redirectUri);
    render(
      c,
      consentPage({
        csrf: csrfTokenOf(token),
        returnTo: c.originalUrl,
        connectorName: req.client.name,
        verified: req.client.verified,
        terms: req.terms,
        destination: dest.shown,
        action: '/oauth/consent',
        hidden,
        durationEditable: true,
      }),
      200,
      [dest.formTarget],
    );
  }

  return [
    speaking(
      PAGE_PROTOCOL,
      get('/oauth/authorize', PUBLIC, async (c) => {
        const query = c.query;
        const target = await authorizationTarget(ctx, query);
        const state = single(query.state);
        const refuse = (error: string, description: string) =>
          seeOther(c, redirectWith(target.redirectUri, { error, error_description: description, state }, issuer));
        if (query.response_type !== 'code') return refuse('unsupported_response_type', 'response_type must be code');
        let req: AuthorizationRequest;
        try {
          req = await authorizationRequest(ctx, query);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          return refuse(oauthErrorOf(err), err.details);
        }
        const human = await signedIn(c);
        if (human !== undefined) showConsent(c, human.token, req, query);
      }),
    ),
    speaking(
      PAGE_PROTOCOL,
      post('/oauth/consent', PUBLIC, async (c) => {
        const userId = await formUser(checkCsrf(c));
        const form = parse(ConsentForm, c.request.body);
        const req = await authorizationRequest(ctx, c.request.body);
        const cap = form.cap ?? req.terms.spendingLimitCents;
        const secs = form.duration ?? req.terms.durationSecs;
        // The human may lower what the connector asked for, never raise it.
        if (cap > req.terms.spendingLimitCents || secs > req.terms.durationSecs || secs < 60) {
          throw new AppError('BCK.HTTP.0400', { details: 'the cap and the duration may be lowered, not raised' });
        }
        const terms = { ...req.terms, spendingLimitCents: cap, durationSecs: secs };
        const r = await decide(ctx, { userId }, { ...req, terms }, form.decision === 'approve');
        seeOther(c, r.redirectTo);
      }),
    ),
    speaking(
      PAGE_PROTOCOL,
      post('/oauth/sign-in', PUBLIC, async (c) => {
        const token = checkCsrf(c);
        const form = parse(SignInForm, c.request.body);
        let userId: string;
        try {
          userId = (await credentials.resolve(`Bearer ${form.api_key}`)).userId;
        } catch (err) {
          if (!(err instanceof AppError) || err.httpStatus !== 401) throw err;
          const page = signInPage({
            csrf: csrfTokenOf(token),
            returnTo: form.return_to,
            error: 'That API key is not valid.',
          });
          return render(c, page, 401);
        }
        setBrowserToken(c, await signIn(ctx, userId), secure, SESSION_MAX_SECS);
        seeOther(c, form.return_to);
      }),
    ),
    speaking(
      PAGE_PROTOCOL,
      post('/oauth/sign-out', PUBLIC, async (c) => {
        const token = checkCsrf(c);
        const form = parse(SignOutForm, c.request.body);
        await signOut(ctx, token);
        setBrowserToken(c, newBrowserToken(), secure, SESSION_MAX_SECS);
        seeOther(c, form.return_to);
      }),
    ),
    speaking(
      PAGE_PROTOCOL,
      get('/device', PUBLIC, async (c) => {
        const human = await signedIn(c);
        if (human === undefined) return;
        render(c, deviceEntryPage({ csrf: csrfTokenOf(human.token), userCode: single(c.query.user_code) ?? '' }));
      }),
    ),
    speaking(
      PAGE_PROTOCOL,
      post('/device', PUBLIC, async (c) => {
        const token = checkCsrf(c);
        const userId = await formUser(token);
        const form = parse(DeviceLookupForm, c.request.body);
        try {
          const d = await deviceDetails(ctx, userId, form.user_code);
          const terms = {
            consentType: d.consentType,
            spendingLimitCents: BigInt(d.spendingLimitCents),
            currency: d.currency,
            durationSecs: d.durationSecs,
          };
          render(
            c,
            consentPage({
              csrf: csrfTokenOf(token),
              returnTo: '/device',
              connectorName: d.connectorName,
              verified: d.verified,
              terms,
              destination: 'the device that showed you the code',
              action: '/device/decision',
              hidden: { user_code: form.user_code },
              durationEditable: false,
            }),
          );
        } catch (err) {
          if (!(err instanceof AppError) || (err.code !== 'BCK.OAUTH.0020' && err.code !== 'BCK.OAUTH.0021')) throw err;
          c.set(err.headers);
          render(
            c,
            deviceEntryPage({ csrf: csrfTokenOf(token), userCode: form.user_code, error: err.details }),
            err.httpStatus,
          );
        }
      }),
    ),
    speaking(
      PAGE_PROTOCOL,
      post('/device/decision', PUBLIC, async (c) => {
        const userId = await formUser(checkCsrf(c));
        const form = parse(DeviceDecisionForm, c.request.body);
        const approve = form.decision === 'approve';
        await decideDevice(ctx, userId, { user_code: form.user_code, approve, spending_limit_cents: form.cap });
        render(
          c,
          approve
            ? messagePage('Device connected', 'You can return to your device: it will continue on its own.')
            : messagePage('Request denied', 'The device was told you said no. You can close this page.'),
        );
      }),
    ),
  ];
}
