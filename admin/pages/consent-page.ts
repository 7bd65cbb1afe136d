// The consent page: GET {WEB_APP_URL}/oauth/authorize (the discovery document's authorization_endpoint) shows a
// connector's authorization request, POST /oauth/consent takes the human's decision. Both go through authorize.ts,
// the JSON endpoint's own rules.
//
// Until the client and the redirect URI are known good, an error is a page and nothing is sent to the redirect
// URI (RFC 6749 §4.1.2.1); after that, errors go back to the connector as `error`, `error_description`, `state`
// and `iss` (RFC 9207).
import type { ParsedUrlQuery } from 'node:querystring';
import { AppError } from '../../shared/errors/app-error.js';
import {
  AUTHORIZATION_FIELDS,
  type AuthorizationRequest,
  authorizationRequest,
  authorizationTarget,
  decide,
  redirectWith,
} from '../../shared/oauth/authorize.js';
import { publisherOf } from '../../shared/oauth/client-metadata-document.js';
import { csrfTokenOf } from '../../shared/oauth/page-session.js';
import type { AdminDeps } from '../deps.js';
import type { AdminHandler, AdminRouterContext } from '../http/route.js';
import { parse } from '../http/validate.js';
import { render, seeOther } from './browser.js';
import { ConsentForm, queryLine } from './forms.js';
import { checkCsrf, formUser, signedIn } from './page-guards.js';
import { consentPage } from './views.js';

/** The OAuth error a refused authorization request is reported to the connector as (RFC 6749 §4.1.2.1). */
function oauthErrorOf(err: AppError): string {
  if (err.code === 'BCK.OAUTH.0025') return 'unauthorized_client';
  // RFC 8707 §2: a resource this service does not serve.
  if (err.code === 'BCK.OAUTH.0040') return 'invalid_target';
  if (err.code === 'BCK.OAUTH.0018' && 'scope' in err.params) return 'invalid_scope';
  return 'invalid_request';
}

/** Where the answer goes, as the human should read it: the host, or the scheme of an app's private-use URI. */
function destinationOf(redirectUri: string): { shown: string; formTarget: string } {
  const url = new URL(redirectUri);
  if (url.protocol === 'http:' || url.protocol === 'https:') return { shown: url.host, formTarget: url.origin };
  return { shown: `the app (${url.protocol})`, formTarget: url.protocol };
}

function showConsent(c: AdminRouterContext, token: string, req: AuthorizationRequest, query: ParsedUrlQuery): void {
  const hidden: Record<string, string> = {};
  // The request's own fields go back with the decision, which is checked by the same rules again.
  for (const f of AUTHORIZATION_FIELDS) {
    const v = queryLine(query[f]);
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
      publisher: publisherOf(req.client.clientId),
      terms: req.terms,
      destination: dest.shown,
      action: '/oauth/consent',
      hidden,
    }),
    200,
    [dest.formTarget],
  );
}

/** GET /oauth/authorize: the consent page, the sign-in page, or the request's refusal sent to the connector. */
export const showAuthorization =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const issuer = ctx.config.publicUrl;
    const query = c.query;
    const target = await authorizationTarget(ctx, query);
    const state = queryLine(query.state);
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
    const human = await signedIn(ctx, c);
    if (human !== undefined) showConsent(c, human.token, req, query);
  };

/** POST /oauth/consent: the human's decision, sent to the connector's redirect URI. */
export const submitConsent =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const userId = await formUser(ctx, checkCsrf(c));
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
  };
