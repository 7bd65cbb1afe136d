// The device page (RFC 8628 §3.3): the human types the code a device showed, sees what the device's connector
// asks for, and decides. Every rule is device-decision.ts's, the JSON endpoints' own.
import { AppError } from '../../shared/errors/app-error.js';
import { decideDevice, deviceDetails } from '../../shared/oauth/device-decision.js';
import { csrfTokenOf } from '../../shared/oauth/page-session.js';
import type { AdminDeps } from '../deps.js';
import type { AdminHandler } from '../http/route.js';
import { parse } from '../http/validate.js';
import { render } from './browser.js';
import { DeviceDecisionForm, DeviceLookupForm, queryLine } from './forms.js';
import { checkCsrf, formUser, signedIn } from './page-guards.js';
import { consentPage, deviceEntryPage, messagePage } from './views.js';

/** GET /device: the code entry form (a link may carry the code as `user_code`), or the sign-in page. */
export const showDeviceEntry =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const human = await signedIn(ctx, c);
    if (human === undefined) return;
    render(c, deviceEntryPage({ csrf: csrfTokenOf(human.token), userCode: queryLine(c.query.user_code) ?? '' }));
  };

/** POST /device: the code's request as a consent page, or the entry form again saying why the code was refused. */
export const lookUpDevice =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const token = checkCsrf(c);
    const userId = await formUser(ctx, token);
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
  };

/** POST /device/decision: the human's decision; the device learns it when it next polls. */
export const submitDeviceDecision =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const userId = await formUser(ctx, checkCsrf(c));
    const form = parse(DeviceDecisionForm, c.request.body);
    const approve = form.decision === 'approve';
    await decideDevice(ctx, userId, { user_code: form.user_code, approve, spending_limit_cents: form.cap });
    render(
      c,
      approve
        ? messagePage('Device connected', 'You can return to your device: it will continue on its own.')
        : messagePage('Request denied', 'The device was told you said no. You can close this page.'),
    );
  };
