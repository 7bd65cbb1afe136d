// The device page (RFC 8628 §3.3): the human types the code a device showed (or follows a link that carries it),
// sees what the device's connector asks for, and decides. Every rule is device-decision.ts's, the JSON endpoints'
// own.
import type { ServiceContext } from '../../shared/context.js';
import { AppError } from '../../shared/errors/app-error.js';
import { decideDevice, deviceDetails } from '../../shared/oauth/device-decision.js';
import { csrfTokenOf } from '../../shared/oauth/page-session.js';
import type { AdminDeps } from '../deps.js';
import type { AdminHandler, AdminRouterContext } from '../http/route.js';
import { parse } from '../http/validate.js';
import { render } from './browser.js';
import { DeviceDecisionForm, DeviceLookupForm, queryLine, shownUserCode } from './forms.js';
import { checkCsrf, formUser, signedIn } from './page-guards.js';
import { consentPage, deviceEntryPage, messagePage } from './views.js';

/**
 * The request a typed code names, as a consent page; or the entry form again saying why the code was refused. The
 * look-up is one guess of the user's (guess-limit.ts), as on the JSON endpoint.
 */
async function showDeviceRequest(
  ctx: ServiceContext,
  c: AdminRouterContext,
  human: { userId: string; token: string },
  typed: string,
): Promise<void> {
  const csrf = csrfTokenOf(human.token);
  try {
    const d = await deviceDetails(ctx, human.userId, typed);
    const terms = {
      consentType: d.consentType,
      spendingLimitCents: BigInt(d.spendingLimitCents),
      currency: d.currency,
      durationSecs: d.durationSecs,
    };
    render(
      c,
      consentPage({
        csrf,
        returnTo: '/device',
        connectorName: d.connectorName,
        verified: d.verified,
        publisher: d.publisher,
        terms,
        destination: 'the device that showed you the code',
        action: '/device/decision',
        hidden: { user_code: typed },
        userCode: shownUserCode(typed),
      }),
    );
  } catch (err) {
    if (!(err instanceof AppError) || (err.code !== 'BCK.OAUTH.0020' && err.code !== 'BCK.OAUTH.0021')) throw err;
    c.set(err.headers);
    render(c, deviceEntryPage({ csrf, userCode: typed, error: err.details }), err.httpStatus);
  }
}

/**
 * GET /device: the code entry form, or the sign-in page (which names the code a link carries). A link's code
 * (`verification_uri_complete`, and the return from signing in) is filled in, never looked up: a look-up spends
 * one of the user's guesses, and a GET can be sent by another site (the pages reload a cross-site navigation to
 * carry the SameSite=Strict session), so only the form's POST, behind its CSRF token, spends one.
 */
export const showDeviceEntry =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const human = await signedIn(ctx, c);
    if (human === undefined) return;
    const typed = queryLine(c.query.user_code) ?? '';
    // Filled in as the device shows it (upper case, with its dash) when it is a code at all.
    render(c, deviceEntryPage({ csrf: csrfTokenOf(human.token), userCode: shownUserCode(typed) ?? typed }));
  };

/** POST /device: the code's request as a consent page, or the entry form again saying why the code was refused. */
export const lookUpDevice =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const token = checkCsrf(c);
    const userId = await formUser(ctx, token);
    const form = parse(DeviceLookupForm, c.request.body);
    await showDeviceRequest(ctx, c, { userId, token }, form.user_code);
  };

/** POST /device/decision: the human's decision; the device learns it when it next polls. */
export const submitDeviceDecision =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const userId = await formUser(ctx, checkCsrf(c));
    const form = parse(DeviceDecisionForm, c.request.body);
    const approve = form.decision === 'approve';
    await decideDevice(ctx, userId, {
      user_code: form.user_code,
      approve,
      spending_limit_cents: form.cap,
      duration_secs: form.duration,
    });
    render(
      c,
      approve
        ? messagePage('Device connected', 'You can return to your device: it will continue on its own.')
        : messagePage('Request denied', 'The device was told you said no. You can close this page.'),
    );
  };
