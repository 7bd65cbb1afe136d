// A connector as a real one is written: panva's openid-client (a certified OAuth client library) configured from
// our discovery document, its requests to the issuer sent to the test stack's proxy front door.
import { SignJWT, decodeJwt, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import { type ClientView, createClient } from '../../shared/oauth/clients.js';
import { type ApiClient, apiClient } from './http.js';
import { createTokenSigner } from '../../shared/keys/signing-keys.js';
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

/** A user (a new one unless given), a connector and an approved authorization request: the start of most flow
 * tests. */
export async function consented(
  stack: Stack,
  extra: Record<string, unknown> = {},
  user?: Awaited<ReturnType<Stack['user']>>,
) {
  const u = user ?? (await stack.user());
  const c = await connector(stack);
  const p = await pkce();
  const { body } = await approve(stack, u.apiKey, authorizeBody(c, p, extra));
  return { u, c, p, code: String(body.code), redirectTo: String(body.redirectTo) };
}

/** The device grant type of RFC 8628 §3.4. */
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** An access token of one of a user's grants, what its claims name, and an API client that presents it. */
export interface GrantToken {
  readonly token: string;
  readonly refreshToken: string;
  readonly grantId: string;
  readonly delegationId: string;
  readonly clientId: string;
  /** Talks to the stack's proxy ({base_url}) with the access token as its Bearer credential. */
  readonly api: ApiClient;
}

function grantToken(stack: Stack, clientId: string, body: Record<string, unknown>): GrantToken {
  const token = String(body.access_token);
  const claims = decodeJwt(token);
  return {
    token,
    refreshToken: String(body.refresh_token),
    grantId: String(claims.grant_id),
    delegationId: String(claims.delegation_id),
    clientId,
    api: apiClient(`${stack.proxyUrl}/api/v1`, token),
  };
}

/**
 * A grant of an existing `user` through the authorization code flow (the user approves with their API key, the
 * connector redeems the code with its PKCE verifier). `extra` overrides the authorization request's terms
 * (scope, spending_limit_cents, currency, duration_secs).
 */
export async function codeGrant(
  stack: Stack,
  user: { apiKey: string },
  extra: Record<string, unknown> = {},
  c?: Connector,
): Promise<GrantToken> {
  const conn = c ?? (await connector(stack));
  const p = await pkce();
  const approved = await approve(stack, user.apiKey, authorizeBody(conn, p, extra));
  if (approved.status !== 201) throw new Error(`authorize: ${approved.status} ${JSON.stringify(approved.body)}`);
  const r = await postForm(stack, '/oauth/token', codeForm(conn, String(approved.body.code), p.verifier));
  if (r.status !== 200) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
  return grantToken(stack, conn.registration.clientId, r.body);
}

/**
 * A grant of an existing `user` through the device flow (RFC 8628): device authorization with the connector's
 * terms (`form`: spending_limit_cents, currency, duration_secs as strings), the user's approval with their API key
 * (POST /oauth/device), then the connector's first poll, which is never too early (no slow_down).
 */
export async function deviceGrant(
  stack: Stack,
  user: { apiKey: string },
  form: Record<string, string> = {},
  c?: Connector,
  /** More of the human's decision (POST /oauth/device), e.g. an organization wallet to pay from. */
  decision: Record<string, unknown> = {},
): Promise<GrantToken> {
  const conn = c ?? (await connector(stack));
  const clientId = conn.registration.clientId;
  const started = await postForm(stack, '/oauth/device_authorization', {
    client_id: clientId,
    scope: 'commerce',
    ...form,
  });
  if (started.status !== 200)
    throw new Error(`device_authorization: ${started.status} ${JSON.stringify(started.body)}`);
  const decided = await fetch(`${stack.proxyUrl}/oauth/device`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${user.apiKey}` },
    body: JSON.stringify({ user_code: started.body.user_code, approve: true, ...decision }),
  });
  if (decided.status !== 204) throw new Error(`device decision: ${decided.status} ${await decided.text()}`);
  const r = await postForm(stack, '/oauth/token', {
    grant_type: DEVICE_GRANT_TYPE,
    client_id: clientId,
    device_code: String(started.body.device_code),
  });
  if (r.status !== 200) throw new Error(`device token: ${r.status} ${JSON.stringify(r.body)}`);
  return grantToken(stack, clientId, r.body);
}

/**
 * Two tokens a resource server must refuse, made from a real one: `expired` (the service's own key, the grant's
 * own claims, an exp in the past) and `forged` (the same claims and a published kid, signed by a key that is not the
 * service's).
 */
export async function expiredAndForged(stack: Stack, token: string): Promise<{ expired: string; forged: string }> {
  const claims = decodeJwt(token);
  const expired = await createTokenSigner(stack.ctx).sign(
    {
      client_id: claims.client_id,
      scope: claims.scope,
      grant_id: claims.grant_id,
      delegation_id: claims.delegation_id,
    },
    { subject: String(claims.sub), audience: String(claims.aud), ttlSecs: -60, typ: 'at+jwt' },
  );
  const { privateKey } = await generateKeyPair('ES256');
  const jwks = (await (await fetch(`${stack.proxyUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  const forged = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: jwks.keys[0]?.kid ?? 'x' })
    .sign(privateKey);
  return { expired, forged };
}

/** The user's binding `bindingId` as GET /oauth/bindings lists it (through the proxy, with the user's API key). */
export async function bindingOf(s: Stack, apiKey: string, bindingId: string): Promise<Record<string, unknown>> {
  const r = await fetch(`${s.proxyUrl}/oauth/bindings?page=1&offset=100`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (r.status !== 200) throw new Error(`bindings: ${r.status}`);
  const body = (await r.json()) as { bindings: Record<string, unknown>[] };
  const b = body.bindings.find((x) => x.bindingId === bindingId);
  if (b === undefined) throw new Error(`binding ${bindingId} not listed`);
  return b;
}
