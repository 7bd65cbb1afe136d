// What the pages' forms send, parsed with zod like every other boundary. The CSRF token is not a field of these
// schemas: it is checked before any of them is parsed (admin/pages/page-guards.ts), so a form without it, or with nothing
// else right, is refused 403 BCK.OAUTH.0022 as a forged one is, never a 400 that tells a forger which fields it got
// wrong.
import { z } from 'zod';
import { MAX_CONSENT_CENTS } from '../../shared/oauth/consent.js';
import { displayUserCode, normalizeUserCode } from '../../shared/oauth/user-code.js';
import { isSingleLine, line } from '../../shared/text.js';

/** A cap typed by the human in major units ("50", "12.5", "12.50") -> cents. */
export const Cap = z
  .string()
  .trim()
  .regex(/^[0-9]{1,7}(\.[0-9]{1,2})?$/, 'must be an amount such as 12.50')
  .transform((v) => {
    const [whole = '0', frac = ''] = v.split('.');
    return BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0'));
  })
  .refine((c) => c >= 1n && c <= MAX_CONSENT_CENTS, 'must be at least 0.01');

/** Where a sign-in or sign-out may return: the two pages only, so the field cannot become an open redirect. */
export const ReturnTo = line(4000).refine(
  (v) => v === '/device' || v.startsWith('/device?') || v.startsWith('/oauth/authorize?'),
  'must be a page of this service',
);

/** A user code as the pages show it (XXXX-XXXX), or undefined when what was typed cannot be one. */
export function shownUserCode(typed: string): string | undefined {
  const normal = normalizeUserCode(typed);
  return normal === undefined ? undefined : displayUserCode(normal);
}

/** The user code a return to the device page carries (a link's `user_code`, once), as shown; else undefined. */
export function deviceCodeOf(returnTo: string): string | undefined {
  if (!returnTo.startsWith('/device?')) return undefined;
  const codes = new URLSearchParams(returnTo.slice('/device?'.length)).getAll('user_code');
  const [typed] = codes;
  return codes.length === 1 && typed !== undefined ? shownUserCode(typed) : undefined;
}

export const SignInForm = z.object({ return_to: ReturnTo, api_key: line(512).min(1) });
export const SignOutForm = z.object({ return_to: ReturnTo.default('/device') });

const Decision = z.enum(['approve', 'deny']);

/** The duration chosen in the page's "For" list, in seconds; the service checks it against what was asked. */
const Duration = z
  .string()
  .regex(/^[0-9]{1,9}$/)
  .transform(Number);

export const ConsentForm = z.object({
  decision: Decision,
  cap: Cap.optional(),
  duration: Duration.optional(),
});

export const DeviceLookupForm = z.object({ user_code: line(64) });
export const DeviceDecisionForm = z.object({
  user_code: line(64),
  decision: Decision,
  cap: Cap.optional(),
  duration: Duration.optional(),
});

/** The `csrf` field a form (or a JSON object) carries; anything else (no field, an array, a repeated field) is no
 *  token, and is refused as a forged one. */
export function submittedCsrf(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'csrf'))
    return undefined;
  return (body as { readonly csrf?: unknown }).csrf;
}

/** A query value a page repeats or shows: one single-line string of at most 1000 characters, else nothing. */
export const queryLine = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length <= 1000 && isSingleLine(v) ? v : undefined;
