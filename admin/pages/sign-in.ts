// Signing in and out of the pages' session (shared/oauth/page-session.ts): the human signs in with an API key,
// and either way the browser gets a fresh token, then returns to the page it came from.
import { AppError } from '../../shared/errors/app-error.js';
import { SESSION_MAX_SECS, csrfTokenOf, newBrowserToken, signIn, signOut } from '../../shared/oauth/page-session.js';
import type { AdminDeps } from '../deps.js';
import type { AdminHandler } from '../http/route.js';
import { parse } from '../http/validate.js';
import { render, seeOther, setBrowserToken } from './browser.js';
import { SignInForm, SignOutForm, deviceCodeOf } from './forms.js';
import { checkCsrf, secureCookies } from './page-guards.js';
import { signInPage } from './views.js';

/** POST /oauth/sign-in: a valid API key starts a session; an invalid one is the sign-in page again, 401. */
export const submitSignIn =
  ({ ctx, credentials }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
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
        deviceCode: deviceCodeOf(form.return_to),
      });
      return render(c, page, 401);
    }
    setBrowserToken(c, await signIn(ctx, userId), secureCookies(ctx), SESSION_MAX_SECS);
    seeOther(c, form.return_to);
  };

/** POST /oauth/sign-out: ends the session. */
export const submitSignOut =
  ({ ctx }: AdminDeps): AdminHandler<undefined> =>
  async (c) => {
    const token = checkCsrf(c);
    const form = parse(SignOutForm, c.request.body);
    await signOut(ctx, token);
    setBrowserToken(c, newBrowserToken(), secureCookies(ctx), SESSION_MAX_SECS);
    seeOther(c, form.return_to);
  };
