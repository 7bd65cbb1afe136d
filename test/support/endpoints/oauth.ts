// Samples of the OAuth endpoints (the discovery documents, the connector's endpoints, the human's approvals with
// an API key, the bindings), and the commerce grant through which the fixtures reach the commerce route.
import { authorize } from '../../../shared/oauth/authorize.js';
import { createClient } from '../../../shared/oauth/clients.js';
import { startDeviceAuthorization } from '../../../shared/oauth/device-authorization.js';
import type { Stack } from '../stack.js';
import type { EndpointCase, EndpointFixtures } from './index.js';
import { PUBLIC_DOCUMENT, page } from './shared-samples.js';

/** PKCE (RFC 7636 appendix B's example pair). */
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const oauthClient = (f: { readonly stack: Stack }) =>
  createClient(f.stack.ctx, {
    name: 'Fuzz connector',
    redirectUris: ['https://c.example/cb'],
    allowedConsentTypes: ['commerce'],
  });

export async function authorizeRequest(f: { readonly stack: Stack }) {
  const c = await oauthClient(f);
  return {
    client_id: c.clientId,
    redirect_uri: 'https://c.example/cb',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'fuzz-state',
    scope: 'commerce',
    spending_limit_cents: '1000',
    currency: 'usd',
    duration_secs: 3600,
  };
}

export async function deviceRequest(f: EndpointFixtures): Promise<{ userCode: string }> {
  const c = await oauthClient(f);
  const r = await startDeviceAuthorization(f.stack.ctx, { client_id: c.clientId, scope: 'commerce' }, '192.0.2.1');
  return { userCode: r.user_code };
}

export const OAUTH_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'GET /.well-known/jwks.json': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-authorization-server': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource/api/v1': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource/mcp': PUBLIC_DOCUMENT,
  'POST /oauth/connect/details': {
    sample: async (f) => {
      const c = await createClient(f.stack.ctx, { name: 'Fuzz connector', redirectUris: ['https://c.example/cb'] });
      return { as: 'subscriber', body: { client_id: c.clientId } };
    },
  },
  'POST /oauth/authorize': {
    sample: async (f) => ({ as: 'subscriber', body: await authorizeRequest(f) }),
  },
  'POST /oauth/device/details': {
    sample: async (f) => {
      const { userCode } = await deviceRequest(f);
      return { as: 'subscriber', apiKey: (await f.stack.user()).apiKey, body: { user_code: userCode } };
    },
  },
  'POST /oauth/device': {
    sample: async (f) => {
      const { userCode } = await deviceRequest(f);
      const body = { user_code: userCode, approve: true, spending_limit_cents: '500', duration_secs: '3600' };
      return { as: 'subscriber', apiKey: (await f.stack.user()).apiKey, body };
    },
  },
  'GET /oauth/bindings': { sample: async () => ({ as: 'subscriber', query: page }) },
  'POST /oauth/bindings/:bindingId/revoke': {
    sample: async (f) => {
      const u = await f.stack.user();
      const r = await authorize(f.stack.ctx, u, await authorizeRequest(f));
      if (!r.approved) throw new Error('not approved');
      return { as: 'subscriber', apiKey: u.apiKey, params: { bindingId: r.grantId } };
    },
  },
  'POST /oauth/token': {
    sample: async (f) => {
      const u = await f.stack.user();
      const body = await authorizeRequest(f);
      const r = await authorize(f.stack.ctx, u, body);
      if (!r.approved) throw new Error('not approved');
      return {
        as: 'subscriber',
        body: {
          grant_type: 'authorization_code',
          client_id: body.client_id,
          code: r.code,
          redirect_uri: body.redirect_uri,
          code_verifier: VERIFIER,
        },
      };
    },
  },
  'POST /oauth/device_authorization': {
    sample: async (f) => ({
      as: 'subscriber',
      body: { client_id: (await oauthClient(f)).clientId, scope: 'commerce' },
    }),
  },
  'POST /oauth/revoke': {
    sample: async (f) => ({ as: 'subscriber', body: { token: f.fresh('token'), token_type_hint: 'refresh_token' } }),
  },
  'POST /oauth/register': {
    sample: async (f) => ({
      as: 'subscriber',
      body: { client_name: `Fuzz host ${f.fresh('name')}`, redirect_uris: ['https://c.example/cb'] },
    }),
  },
};

/**
 * A commerce grant of `user` through the real endpoints (the human approves with their key, the connector redeems
 * the code), and a function giving its access token, redeemed anew every 10 minutes (tokens live 15).
 */
export function commerceTokens(f: { stack: Stack; user: { apiKey: string | undefined } }): () => Promise<string> {
  let current: { token: string; at: number } | undefined;
  return async () => {
    if (current !== undefined && Date.now() - current.at < 600_000) return current.token;
    const request = await authorizeRequest(f);
    const base = f.stack.proxyUrl;
    const approved = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${f.user.apiKey ?? ''}` },
      body: JSON.stringify(request),
    });
    const code = ((await approved.json()) as { code?: string }).code;
    const redeemed = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code ?? '',
        redirect_uri: 'https://c.example/cb',
        client_id: request.client_id,
        code_verifier: VERIFIER,
      }),
    });
    const token = ((await redeemed.json()) as { access_token?: string }).access_token;
    if (token === undefined) throw new Error(`commerce token: ${redeemed.status}`);
    current = { token, at: Date.now() };
    return token;
  };
}
