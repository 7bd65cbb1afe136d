// What the consent and device pages show. Each view is a function of what it displays, rendered with `html`
// (escaped). Forms post back to this origin with the page's CSRF token.
import type { ConsentType } from '../../shared/db/entities/index.js';
import { CONSENT_WORDING } from '../../shared/oauth/consent.js';
import { type Html, html, layout } from './html.js';

export interface Terms {
  readonly consentType: ConsentType;
  readonly spendingLimitCents: bigint;
  readonly currency: string;
  readonly durationSecs: number;
}

/** 5000n, 'usd' -> "50.00 USD". */
export function money(cents: bigint, currency: string): string {
  const whole = cents / 100n;
  const frac = (cents % 100n).toString().padStart(2, '0');
  return `${whole}.${frac} ${currency.toUpperCase()}`;
}

/** 5000n -> "50.00": the editable form of a cap. */
export const decimal = (cents: bigint): string => `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;

export function duration(secs: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    if (secs >= size && secs % size === 0) return `${secs / size} ${name}${secs / size === 1 ? '' : 's'}`;
  }
  return `${secs} seconds`;
}

/** The shorter durations a human may choose instead of the one asked for. */
export function durationChoices(asked: number): number[] {
  const shorter = [3600, 86_400, 7 * 86_400, 30 * 86_400].filter((d) => d < asked);
  return [asked, ...shorter.reverse()];
}

const signOutForm = (
  csrf: string,
  returnTo: string,
) => html`<form class="inline" method="post" action="/oauth/sign-out">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="return_to" value="${returnTo}">
<button type="submit">Sign out</button></form>`;

export interface SignInView {
  readonly csrf: string;
  readonly returnTo: string;
  readonly error?: string | undefined;
  /** The user code a device page link carried (XXXX-XXXX), named so the human knows what they sign in for. */
  readonly deviceCode?: string | undefined;
}

export function signInPage(p: SignInView): Html {
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
${p.deviceCode === undefined ? undefined : html`<p>You are connecting the device that shows <strong>${p.deviceCode}</strong>.</p>`}
<p class="muted">Sign in with one of your API keys to review what an application asks for.</p>
${p.error === undefined ? undefined : html`<p class="error" role="alert">${p.error}</p>`}
<form method="post" action="/oauth/sign-in">
<input type="hidden" name="csrf" value="${p.csrf}"><input type="hidden" name="return_to" value="${p.returnTo}">
<label for="api_key">API key</label><input id="api_key" name="api_key" type="password" autocomplete="off" required>
<div class="actions"><button type="submit">Sign in</button></div></form>`,
  );
}

export interface ConsentView {
  readonly csrf: string;
  readonly returnTo: string;
  readonly connectorName: string;
  readonly verified: boolean;
  /** The host publishing the client's metadata document, when the client is named by one. */
  readonly publisher?: string | undefined;
  readonly terms: Terms;
  /** Where the answer goes: the redirect URI's host (or scheme, for an app's private-use scheme). */
  readonly destination: string;
  /** The form that carries the decision, and the request's own fields to send back with it. */
  readonly action: string;
  readonly hidden: Readonly<Record<string, string>>;
  /** The device flow's user code (XXXX-XXXX): RFC 8628 §5.4 has the human check it is the one their device shows. */
  readonly userCode?: string | undefined;
}

export function consentPage(v: ConsentView): Html {
  const t = v.terms;
  const hidden = Object.entries(v.hidden).map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`);
  const options = durationChoices(t.durationSecs).map(
    (d) => html`<option value="${d}"${d === t.durationSecs ? html` selected` : undefined}>${duration(d)}</option>`,
  );
  return layout(
    'Approve access',
    html`<h1>${v.connectorName} wants to spend on your behalf</h1>
${v.verified ? html`<p class="muted">Verified connector.</p>` : html`<p class="warn"><strong>Unverified connector:</strong> the operator has not checked who runs it.</p>`}
${v.publisher === undefined ? undefined : html`<p class="warn">It describes itself at <strong>${v.publisher}</strong>: approve only if you expect a connector from there.</p>`}
<p>${CONSENT_WORDING[t.consentType]}</p>
<dl>${v.userCode === undefined ? undefined : html`<dt>Code</dt><dd>${v.userCode}</dd>`}<dt>Access</dt><dd>${t.consentType}</dd><dt>Cap</dt><dd>${money(t.spendingLimitCents, t.currency)}</dd>
<dt>For</dt><dd>${duration(t.durationSecs)}</dd><dt>Answer goes to</dt><dd>${v.destination}</dd></dl>
${v.userCode === undefined ? undefined : html`<p class="muted">Approve only if your device shows this code.</p>`}
<form method="post" action="${v.action}">${hidden}<input type="hidden" name="csrf" value="${v.csrf}">
<label for="cap">Cap (${t.currency.toUpperCase()}, at most ${decimal(t.spendingLimitCents)})</label>
<input id="cap" name="cap" inputmode="decimal" value="${decimal(t.spendingLimitCents)}" required>
<label for="duration">For</label><select id="duration" name="duration">${options}</select>
<div class="actions"><button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></div></form>`,
    signOutForm(v.csrf, v.returnTo),
  );
}

export function deviceEntryPage(p: { csrf: string; userCode: string; error?: string | undefined }): Html {
  return layout(
    'Connect a device',
    html`<h1>Connect a device</h1><p>Type the code your device shows.</p>
${p.error === undefined ? undefined : html`<p class="error" role="alert">${p.error}</p>`}
<form method="post" action="/device"><input type="hidden" name="csrf" value="${p.csrf}">
<label for="user_code">Code</label><input id="user_code" name="user_code" value="${p.userCode}" autocomplete="off"
 placeholder="XXXX-XXXX" required><div class="actions"><button type="submit">Continue</button></div></form>`,
    signOutForm(p.csrf, '/device'),
  );
}

export function messagePage(title: string, message: string, status: 'ok' | 'error' = 'ok'): Html {
  return layout(title, html`<h1>${title}</h1><p class="${status === 'ok' ? 'muted' : 'error'}">${message}</p>`);
}

/** A refused request, naming its error code (docs/errors.md) as the JSON envelope would, for whoever reports it. */
export function errorPage(message: string, code: string): Html {
  return layout(
    'Something is wrong with this request',
    html`<h1>Something is wrong with this request</h1><p class="error">${message}</p>
<p class="muted">Error code: <code>${code}</code></p>`,
  );
}

/** Reloads `path` at once (a same-site navigation, which carries the SameSite=Strict session cookie). */
export function reloadPage(path: string): Html {
  return layout(
    'Continue',
    html`<meta http-equiv="refresh" content="0;url=${path}"><h1>Continue</h1><p><a href="${path}">Continue to payroute</a></p>`,
  );
}
