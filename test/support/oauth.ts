// A connector as a real one is written: panva's openid-client (a certified OAuth client library) configured from
// our discovery document, its requests to the issuer sent to the test stack's proxy front door.
import * as client from 'openid-client';
import { type ClientView, createClient } from '../../shared/oauth/clients.js';
import type { Stack } from './stack.js';

export const ISSUER = 'http://payroute.test'; // the stack's PUBLIC_URL
export const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

export interface Connector {
  readonly registration: ClientView;
  readonly config: client.Configuration;
}

export async function connector(
  stack: Stack,
  registration: Partial<Parameters<typeof createClient>[1] & object> = {},
): Promise<Connector> {
  const reg = await createClient(stack.ctx, {
    name: 'Test Connector',
    redirectUris: [REDIRECT_URI],
    allowedConsentTypes: ['commerce', 'account_access'],
    verified: true,
    accountLevel: true,
    ...registration,
  });
  const toProxy: client.CustomFetch = (url, options) =>
    fetch(url.replace(ISSUER, stack.proxyUrl), options as RequestInit);
  const config = await client.discovery(new URL(ISSUER), reg.clientId, undefined, client.None(), {
    algorithm: 'oauth2',
    execute: [client.allowInsecureRequests],
    [client.customFetch]: toProxy,
  });
  return { registration: reg, config };
}

export interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
}

export async function pkce(): Promise<Pkce> {
  const verifier = client.randomPKCECodeVerifier();
  return { verifier, challenge: await client.calculatePKCECodeChallenge(verifier) };
}

/** The human's approval, as the consent page sends it: POST /oauth/authorize with their API key. */
export async function approve(
  stack: Stack,
  apiKey: string,
  body: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${stack.proxyUrl}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

export const authorizeBody = (c: Connector, p: Pkce, extra: Record<string, unknown> = {}) => ({
  client_id: c.registration.clientId,
  redirect_uri: REDIRECT_URI,
  code_challenge: p.challenge,
  code_challenge_method: 'S256',
  state: 'st-123',
  scope: 'commerce',
  spending_limit_cents: 5000,
  currency: 'usd',
  duration_secs: 3600,
  ...extra,
});

/** Posts a form to an RFC 6749 endpoint of the stack (what openid-client does, for the refusal cases). */
export async function postForm(
  stack: Stack,
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const r = await fetch(`${stack.proxyUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await r.text();
  return {
    status: r.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: r.headers,
  };
}

/** The token request redeeming `code` (RFC 6749 §4.1.3), as a form. */
export const codeForm = (c: Connector, code: string, verifier: string): Record<string, string> => ({
  grant_type: 'authorization_code',
  client_id: c.registration.clientId,
  code,
  redirect_uri: REDIRECT_URI,
  code_verifier: verifier,
});

/** The token request refreshing with `refreshToken`, as a form. */
export const refreshForm = (c: Connector, refreshToken: string): Record<string, string> => ({
  grant_type: 'refresh_token',
  client_id: c.registration.clientId,
  refresh_token: refreshToken,
});

/** A user, a connector and an approved authorization request: the start of most flow tests. */
export async function consented(stack: Stack, extra: Record<string, unknown> = {}) {
  const u = await stack.user();
  const c = await connector(stack);
  const p = await pkce();
  const { body } = await approve(stack, u.apiKey, authorizeBody(c, p, extra));
  return { u, c, p, code: String(body.code), redirectTo: String(body.redirectTo) };
}
