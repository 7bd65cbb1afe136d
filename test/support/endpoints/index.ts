// Every route of the service, keyed `METHOD path-pattern` as the route tables declare it (admin: Koa's paths under
// their /api/v1 prefix; proxy: its RouteTable, whose `*` is any method), each with a valid sample request built
// from a set of fixtures (a seller with a plan and an agent, a subscriber holding credits, a delegation, an x402
// permission, a router payment, a free merchant). The boundary fuzz test sends hostile strings through every string
// field of these samples; a route-table test can check that the keys cover every declared route.
//
// Each string field of a sample has a kind, which says what a hostile value must get:
//   line   single-line text: a control character or an unpaired surrogate is a 400 (shared/text.ts line());
//   text   multi-line text: the same, TAB, LF and CR allowed (text());
//   id     a path identifier the service resolves (planId, agentId, ...): anything that names nothing is a 404,
//          and a refused character may be a 400 or that 404;
//   opaque forwarded or parsed elsewhere as it is (the router's JSON body and header values, merchant offers):
//          never a 5xx, nothing more.
// Body, query and header strings are `line` and path parameters `id` unless `kinds` says otherwise.
import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { AUTHORIZATION_FIELDS, authorize } from '../../shared/oauth/authorize.js';
import { createClient } from '../../shared/oauth/clients.js';
import { startDeviceAuthorization } from '../../shared/oauth/device-authorization.js';
import { csrfTokenOf, newBrowserToken, signIn } from '../../shared/oauth/page-session.js';
import { ORG_BUDGETS_ENDPOINTS } from './endpoints-org-budgets.js';
import { ORG_MEMBERS_ENDPOINTS } from './endpoints-org-members.js';
import { ORG_WALLETS_ENDPOINTS } from './endpoints-org-wallets.js';
import type { ApiClient } from './http.js';
import { USDC, createDelegation, fund, scriptedMerchant } from './router-fixtures.js';
import type { Running } from './merchants/listen.js';
import { agentBody, attachPlan, createAgent, createPlan, planBody, testAddress } from './registry-builders.js';
import type { Stack } from './stack.js';
import { SANDBOX_NETWORK, delegation, mint, paymentRequired, permission, permissionBody } from './x402.js';

export type FieldKind = 'line' | 'text' | 'id' | 'opaque';

export interface SampleRequest {
  /** Whose API key sends it. */
  readonly as: 'seller' | 'subscriber';
  /** The concrete method (for `*` routes, one of the methods they take). */
  readonly method?: string;
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** A key of another user than `as` names (the OAuth samples use a fresh user: a user's wrong user-code guesses
   *  are limited, and the fuzz makes many). */
  readonly apiKey?: string;
}

export interface EndpointCase {
  /** A valid request (a 2xx), built anew for each use (fresh request ids, fresh agent requests). */
  sample(f: EndpointFixtures): Promise<SampleRequest>;
  /**
   * Kinds of fields that are not the default of their place, by dotted path (`body.description`,
   * `params.agentId`); `*` matches one segment, and a trailing `**` everything below.
   */
  readonly kinds?: Readonly<Record<string, FieldKind>>;
  /** Objects whose keys are fields too (a record of headers), by dotted path; the keys are `line`. */
  readonly keyed?: readonly string[];
  /** What the valid sample answers when it is not a 2xx (a page's form answers 303 See Other). */
  readonly okStatus?: number;
}

export interface EndpointFixtures {
  readonly stack: Stack;
  readonly seller: { readonly api: ApiClient; readonly walletAddress: string };
  readonly subscriber: { readonly api: ApiClient; readonly walletAddress: string };
  /** The seller's listed plan (1 USDC for 10 credits), attached to `agentId`. */
  readonly planId: string;
  /** Another plan of the seller's, for the routes that change a plan or its attachments. */
  readonly otherPlanId: string;
  readonly agentId: string;
  /** The subscriber's erc4337 delegation (a large cap) and one that may be revoked. */
  readonly delegationId: string;
  readonly spareDelegationId: string;
  readonly accessToken: string;
  readonly x402AccessToken: string;
  /** A permission of the subscriber's that may be revoked. */
  readonly sparePermissionHash: string;
  readonly paymentId: string;
  /** A merchant that answers every request 200, free. */
  readonly merchantUrl: string;
  /** An access token of a commerce grant of the subscriber's (fetched anew before the last one could expire). */
  commerceToken(): Promise<string>;
  /** A fresh agent request of the subscriber's, initialized by the seller. */
  agentRequest(): Promise<{ agentRequestId: string; proof: string }>;
  fresh(prefix: string): string;
}

const ASK = 'https://agent.example.com/api/v1/ask';

/** An x402 v2 option a merchant might offer (USDC on Base Sepolia), for mode A. */
const offer = () => ({
  scheme: 'exact',
  network: SANDBOX_NETWORK,
  asset: USDC.address,
  amount: '100',
  payTo: getAddress(testAddress(0xfeed)),
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
});

const page = { page: '1', offset: '10' };

/** PKCE (RFC 7636 appendix B's example pair). */
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const oauthClient = (f: { readonly stack: Stack }) =>
  createClient(f.stack.ctx, {
    name: 'Fuzz connector',
    redirectUris: ['https://c.example/cb'],
    allowedConsentTypes: ['commerce'],
  });

async function authorizeRequest(f: { readonly stack: Stack }) {
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

/** A signed-in page session of a fresh user: its cookie and the CSRF token bound to it. */
async function pageSession(f: EndpointFixtures): Promise<{ cookie: string; csrf: string }> {
  const token = await signIn(f.stack.ctx, (await f.stack.user()).userId);
  return { cookie: `payroute_page=${token}`, csrf: csrfTokenOf(token) };
}

const PAGE_KINDS: Readonly<Record<string, FieldKind>> = { 'headers.cookie': 'opaque', 'body.csrf': 'opaque' };

/** Every value as a string, as a query string or a form carries it. */
const stringsOf = (o: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

async function deviceRequest(f: EndpointFixtures): Promise<{ userCode: string }> {
  const c = await oauthClient(f);
  const r = await startDeviceAuthorization(f.stack.ctx, { client_id: c.clientId, scope: 'commerce' }, '192.0.2.1');
  return { userCode: r.user_code };
}

/** A public discovery document: no body, an unknown query parameter is ignored. */
const PUBLIC_DOCUMENT: EndpointCase = {
  sample: async () => ({ as: 'seller', query: { probe: 'x' } }),
  kinds: { 'query.probe': 'opaque' },
};

export const ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  // Admin, outside /api/v1.
  'GET /healthz': { sample: async () => ({ as: 'seller', query: { probe: 'x' } }), kinds: { 'query.probe': 'opaque' } },
  'GET /readyz': { sample: async () => ({ as: 'seller', query: { probe: 'x' } }), kinds: { 'query.probe': 'opaque' } },
  'GET /.well-known/jwks.json': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-authorization-server': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource/api/v1': PUBLIC_DOCUMENT,
  // The API description and its reference page (public, no body).
  'GET /api/v1/openapi.json': PUBLIC_DOCUMENT,
  'GET /docs': PUBLIC_DOCUMENT,
  'GET /docs/rapidoc-min.js': PUBLIC_DOCUMENT,
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
      const body = { user_code: userCode, approve: true, spending_limit_cents: '500' };
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
  // The pages: public routes with their own session (a cookie) and CSRF tokens, which are opaque here (a hostile
  // one is refused as forged, 403, not as malformed). A query field past the client and redirect URI is sent back
  // to the connector (303), so those are opaque too.
  'GET /oauth/authorize': {
    sample: async (f) => ({
      as: 'subscriber',
      query: { response_type: 'code', ...stringsOf(await authorizeRequest(f)) },
    }),
    kinds: Object.fromEntries(
      ['response_type', ...AUTHORIZATION_FIELDS.filter((k) => k !== 'client_id' && k !== 'redirect_uri')].map((k) => [
        `query.${k}`,
        'opaque' as const,
      ]),
    ),
  },
  'POST /oauth/consent': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      const body = {
        ...stringsOf(await authorizeRequest(f)),
        csrf,
        decision: 'approve',
        cap: '5.00',
        duration: '3600',
      };
      return { as: 'subscriber', headers: { cookie }, body };
    },
    kinds: PAGE_KINDS,
    okStatus: 303,
  },
  'POST /oauth/sign-in': {
    sample: async (f) => {
      const token = newBrowserToken();
      const body = { csrf: csrfTokenOf(token), return_to: '/device', api_key: (await f.stack.user()).apiKey };
      return { as: 'subscriber', headers: { cookie: `payroute_page=${token}` }, body };
    },
    kinds: { ...PAGE_KINDS, 'body.api_key': 'opaque' },
    okStatus: 303,
  },
  'POST /oauth/sign-out': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      return { as: 'subscriber', headers: { cookie }, body: { csrf, return_to: '/device' } };
    },
    kinds: PAGE_KINDS,
    okStatus: 303,
  },
  'GET /device': {
    sample: async () => ({ as: 'subscriber', query: { user_code: 'BCDF-GHJK' } }),
    kinds: { 'query.user_code': 'opaque' },
  },
  'POST /device': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      return { as: 'subscriber', headers: { cookie }, body: { csrf, user_code: (await deviceRequest(f)).userCode } };
    },
    kinds: PAGE_KINDS,
  },
  'POST /device/decision': {
    sample: async (f) => {
      const { cookie, csrf } = await pageSession(f);
      const userCode = (await deviceRequest(f)).userCode;
      return {
        as: 'subscriber',
        headers: { cookie },
        body: { csrf, user_code: userCode, decision: 'approve', cap: '1.00' },
      };
    },
    kinds: PAGE_KINDS,
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

  // Agents.
  'POST /api/v1/protocol/agents': {
    sample: async () => ({ as: 'seller', body: agentBody() }),
    kinds: { 'body.description': 'text' },
  },
  'GET /api/v1/protocol/agents': {
    sample: async () => ({ as: 'seller', query: { ...page, sortBy: 'name', sortOrder: 'asc' } }),
  },
  'POST /api/v1/protocol/agents/plans': {
    sample: async () => {
      const a = agentBody();
      const p = planBody();
      return {
        as: 'seller',
        body: {
          agentMetadata: { name: a.name, description: a.description, tags: a.tags },
          agentApi: { endpoints: a.endpoints, agentDefinitionUrl: a.agentDefinitionUrl },
          planMetadata: { name: p.name, description: p.description },
          priceConfig: p.priceConfig,
          creditsConfig: p.creditsConfig,
          accessLimit: 'credits',
        },
      };
    },
    kinds: { 'body.agentMetadata.description': 'text', 'body.planMetadata.description': 'text' },
  },
  'GET /api/v1/protocol/agents/:agentId': {
    sample: async (f) => ({ as: 'subscriber', params: { agentId: f.agentId } }),
  },
  'PUT /api/v1/protocol/agents/:agentId': {
    sample: async (f) => ({
      as: 'seller',
      params: { agentId: f.agentId },
      body: { name: 'Weather agent', description: 'Answers\nabout the weather', tags: ['weather'] },
    }),
    kinds: { 'body.description': 'text' },
  },
  'PUT /api/v1/protocol/agents/:agentId/list/:activate': {
    sample: async (f) => ({ as: 'seller', params: { agentId: f.agentId, activate: 'true' } }),
    kinds: { 'params.activate': 'line' },
  },
  'POST /api/v1/protocol/agents/:agentId/plan/:planId': {
    sample: async (f) => ({ as: 'seller', params: { agentId: f.agentId, planId: f.otherPlanId } }),
  },
  'DELETE /api/v1/protocol/agents/:agentId/plan/:planId': {
    sample: async (f) => ({ as: 'seller', params: { agentId: f.agentId, planId: f.otherPlanId } }),
  },
  'GET /api/v1/protocol/agents/:agentId/plans': {
    sample: async (f) => ({ as: 'seller', params: { agentId: f.agentId }, query: page }),
  },

  // Plans.
  'POST /api/v1/protocol/plans': {
    sample: async () => ({ as: 'seller', body: planBody() }),
    kinds: { 'body.description': 'text' },
  },
  'GET /api/v1/protocol/plans': {
    sample: async () => ({ as: 'seller', query: { ...page, sortBy: 'createdAt', sortOrder: 'desc' } }),
  },
  'GET /api/v1/protocol/plans/:planId': {
    sample: async (f) => ({ as: 'subscriber', params: { planId: f.planId } }),
  },
  'PUT /api/v1/protocol/plans/:planId': {
    sample: async (f) => ({
      as: 'seller',
      params: { planId: f.otherPlanId },
      body: { name: 'Other plan', description: 'Kept\tfor the routes that change plans' },
    }),
    kinds: { 'body.description': 'text' },
  },
  'PUT /api/v1/protocol/plans/:planId/list/:activate': {
    sample: async (f) => ({ as: 'seller', params: { planId: f.otherPlanId, activate: 'true' } }),
    kinds: { 'params.activate': 'line' },
  },
  'GET /api/v1/protocol/plans/:planId/agents': {
    sample: async (f) => ({ as: 'seller', params: { planId: f.planId }, query: page }),
  },

  // Credits and access.
  'POST /api/v1/protocol/plans/mint': {
    sample: async (f) => ({
      as: 'seller',
      body: { planId: f.planId, holderAddress: f.subscriber.walletAddress, amount: '1' },
    }),
  },
  'POST /api/v1/protocol/plans/mintExpirable': {
    sample: async (f) => ({
      as: 'seller',
      body: { planId: f.planId, holderAddress: f.subscriber.walletAddress, amount: '1', durationSecs: 3600 },
    }),
  },
  'POST /api/v1/protocol/plans/redeem': {
    sample: async (f) => {
      const r = await f.agentRequest();
      return {
        as: 'seller',
        body: { planId: f.planId, holderAddress: f.subscriber.walletAddress, amount: '1', proof: r.proof },
      };
    },
  },
  'POST /api/v1/protocol/plans/:planId/order': {
    sample: async (f) => ({ as: 'subscriber', params: { planId: f.planId } }),
  },
  'GET /api/v1/protocol/plans/:planId/balance/:holderAddress': {
    sample: async (f) => ({
      as: 'subscriber',
      params: { planId: f.planId, holderAddress: f.subscriber.walletAddress },
    }),
    kinds: { 'params.holderAddress': 'line' },
  },
  'POST /api/v1/protocol/agent-sub-tasks': {
    sample: async (f) => {
      const r = await f.agentRequest();
      return {
        as: 'seller',
        body: {
          agentRequestId: r.agentRequestId,
          creditsToRedeem: '1',
          tag: f.fresh('tag'),
          description: 'Step one:\n\tfetched',
          status: 'done',
        },
      };
    },
    kinds: { 'body.description': 'text' },
  },
  'GET /api/v1/protocol/token/:planId/:agentId': {
    sample: async (f) => ({ as: 'subscriber', params: { planId: f.planId, agentId: f.agentId } }),
    kinds: { 'params.agentId': 'line' },
  },
  'POST /api/v1/protocol/agents/initialize/:agentId': {
    sample: async (f) => ({
      as: 'seller',
      params: { agentId: f.agentId },
      body: { accessToken: f.accessToken, endpoint: ASK, httpVerb: 'POST', maxCredits: '1' },
    }),
    kinds: { 'params.agentId': 'line' },
  },

  // Delegations.
  'POST /api/v1/delegation/create': {
    sample: async () => ({
      as: 'subscriber',
      body: {
        provider: 'erc4337',
        spendingLimitCents: '100',
        durationSecs: 3600,
        currency: 'usd',
        allowedRecipients: [testAddress(0xbeef)],
        providerPaymentMethodId: 'pm_card_visa',
      },
    }),
  },
  'GET /api/v1/delegation': {
    sample: async () => ({ as: 'subscriber', query: { ...page, accessible: 'true', status: 'Active' } }),
  },
  'GET /api/v1/delegation/:id': { sample: async (f) => ({ as: 'subscriber', params: { id: f.delegationId } }) },
  'DELETE /api/v1/delegation/:id': {
    sample: async (f) => ({ as: 'subscriber', params: { id: f.spareDelegationId } }),
  },
  'GET /api/v1/delegation/:id/transactions': {
    sample: async (f) => ({ as: 'subscriber', params: { id: f.delegationId }, query: page }),
  },

  // x402 permissions.
  'POST /api/v1/x402/permissions': {
    sample: async (f) => ({
      as: 'subscriber',
      body: permissionBody({ planId: f.planId, agentId: f.agentId, httpVerb: 'POST', delegationId: f.delegationId }),
    }),
    kinds: { 'body.resource.description': 'text' },
  },
  'GET /api/v1/x402/permissions': {
    sample: async () => ({ as: 'subscriber', query: { ...page, scheme: 'svc:erc4337' } }),
  },
  'GET /api/v1/x402/permissions/:permissionHash': {
    sample: async (f) => ({ as: 'subscriber', params: { permissionHash: f.sparePermissionHash } }),
  },
  'DELETE /api/v1/x402/permissions/:permissionHash': {
    sample: async (f) => ({ as: 'subscriber', params: { permissionHash: f.sparePermissionHash } }),
  },
  'POST /api/v1/x402/verify': {
    sample: async (f) => ({
      as: 'seller',
      body: {
        paymentRequired: paymentRequired({ planId: f.planId }),
        x402AccessToken: f.x402AccessToken,
        maxAmount: '1',
      },
    }),
    kinds: { 'body.paymentRequired.error': 'text', 'body.paymentRequired.resource.description': 'text' },
  },
  'POST /api/v1/x402/settle': {
    sample: async (f) => ({
      as: 'seller',
      body: {
        paymentRequired: paymentRequired({ planId: f.planId }),
        x402AccessToken: f.x402AccessToken,
        maxAmount: '1',
        agentRequestId: f.fresh('settle'),
      },
    }),
    kinds: { 'body.paymentRequired.error': 'text', 'body.paymentRequired.resource.description': 'text' },
  },

  // The router (the proxy process).
  'POST /api/v1/router/payments': {
    sample: async (f) => ({
      as: 'subscriber',
      body: {
        delegationId: f.delegationId,
        protocol: 'x402',
        target: { x402Version: 2, accepts: [offer()] },
        resourceUrl: `${f.merchantUrl}/paid`,
        requestId: f.fresh('mint'),
      },
    }),
    // A merchant's offers, decoded by the x402 codec, which refuses what it cannot pay.
    kinds: { 'body.target.accepts.**': 'opaque' },
  },
  'POST /api/v1/router/route': {
    sample: async (f) => ({
      as: 'subscriber',
      body: {
        requestId: f.fresh('route'),
        delegationId: f.delegationId,
        url: `${f.merchantUrl}/free`,
        method: 'POST',
        headers: { 'x-note': 'hello' },
        body: { q: 'hello', list: ['a', 'b'] },
      },
    }),
    // Forwarded as written: the JSON body, and header values (the outbound module checks those as header values).
    kinds: { 'body.body.**': 'opaque', 'body.headers.*': 'opaque' },
    keyed: ['body.headers'],
  },
  'POST /api/v1/router/payments/:id/settled': {
    sample: async (f) => ({ as: 'subscriber', params: { id: f.paymentId }, body: { txHash: `0x${'ab'.repeat(32)}` } }),
  },
  'GET /api/v1/router/payments': {
    sample: async (f) => ({
      as: 'subscriber',
      query: {
        delegationId: f.delegationId,
        from: '2020-01-01',
        to: '2099-12-31T00:00:00Z',
        format: 'json',
        limit: '10',
        page: '1',
      },
    }),
  },
  'GET /api/v1/router/payments/summary': {
    sample: async (f) => ({
      as: 'subscriber',
      query: { granularity: 'day', delegationId: f.delegationId, from: '2020-01-01', to: '2099-12-31' },
    }),
  },
  'POST /api/v1/router/commerce/route': {
    sample: async (f) => ({
      as: 'subscriber',
      apiKey: await f.commerceToken(),
      body: {
        requestId: f.fresh('commerce'),
        url: `${f.merchantUrl}/free`,
        method: 'POST',
        headers: { 'x-note': 'hello' },
        body: { q: 'hello' },
      },
    }),
    kinds: { 'body.body.**': 'opaque', 'body.headers.*': 'opaque' },
    keyed: ['body.headers'],
  },
  '* /api/v1/router/proxy': { sample: async (f) => proxySample(f) },
  '* /api/v1/proxy': { sample: async (f) => proxySample(f) },
  '* /proxy': { sample: async (f) => proxySample(f) },

  // Organizations: each sample makes its own organization (the seller its Admin).
  ...ORG_MEMBERS_ENDPOINTS,
  ...ORG_WALLETS_ENDPOINTS,
  ...ORG_BUDGETS_ENDPOINTS,
};

function proxySample(f: EndpointFixtures): SampleRequest {
  return {
    as: 'subscriber',
    method: 'GET',
    headers: {
      'x-router-target-url': `${f.merchantUrl}/free`,
      'x-router-delegation-id': f.delegationId,
      'x-router-request-id': f.fresh('proxy'),
      'x-router-upstream-authorization': 'Bearer merchant-key',
    },
  };
}

/**
 * A commerce grant of `user` through the real endpoints (the human approves with their key, the connector redeems
 * the code), and a function giving its access token, redeemed anew every 10 minutes (tokens live 15).
 */
function commerceTokens(f: { stack: Stack; user: { apiKey: string | undefined } }): () => Promise<string> {
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

/** The stack should run with PAID_ENV (router-fixtures.ts): the free merchant listens on 127.0.0.1. */
export async function endpointFixtures(stack: Stack): Promise<EndpointFixtures & { close(): Promise<void> }> {
  const merchant: Running = await scriptedMerchant((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"free":true}');
  });
  const seller = await stack.user();
  const subscriber = await stack.user();
  const plan = await createPlan(seller.api, { creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '1' } });
  const otherPlan = await createPlan(seller.api, { name: 'Other plan' });
  const agent = await createAgent(seller.api);
  await attachPlan(seller.api, agent.agentId, plan.planId);
  // Plenty of everything: the fuzz runs spend a credit, an order or a payment per valid request.
  await mint(seller.api, plan.planId, subscriber.walletAddress, '1000000000000');
  await fund(stack, undefined, subscriber, 1_000_000_000_000n, USDC);
  const delegationId = await createDelegation(subscriber, '10000000000');
  const spareDelegationId = await delegation(subscriber.api, { provider: 'erc4337', spendingLimitCents: 100 });
  const token = await subscriber.api.get(`/protocol/token/${plan.planId}/${agent.agentId}`);
  if (token.status !== 200) throw new Error(`token: ${token.status} ${token.text}`);
  const p = await permission(subscriber.api, { planId: plan.planId, delegationId });
  const spare = await permission(subscriber.api, { planId: plan.planId });
  let n = 0;
  const fresh = (prefix: string) => `${prefix}-${Date.now()}-${++n}-${randomUUID().slice(0, 8)}`;
  const mode = await subscriber.api.post('/router/payments', {
    delegationId,
    protocol: 'x402',
    target: { x402Version: 2, accepts: [offer()] },
    requestId: fresh('fixture'),
  });
  if (mode.status !== 200) throw new Error(`router payment: ${mode.status} ${mode.text}`);
  return {
    stack,
    seller,
    subscriber,
    planId: plan.planId,
    otherPlanId: otherPlan.planId,
    agentId: agent.agentId,
    delegationId,
    spareDelegationId,
    accessToken: token.body.accessToken,
    x402AccessToken: p.x402AccessToken,
    sparePermissionHash: spare.permissionHash,
    paymentId: mode.body.paymentId,
    merchantUrl: merchant.url,
    commerceToken: commerceTokens({ stack, user: subscriber.api }),
    async agentRequest() {
      const r = await seller.api.post(`/protocol/agents/initialize/${agent.agentId}`, {
        accessToken: token.body.accessToken,
        endpoint: ASK,
        httpVerb: 'POST',
        maxCredits: '100',
      });
      if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
      return { agentRequestId: r.body.agentRequestId, proof: r.body.proof };
    },
    fresh,
    close: () => merchant.close(),
  };
}
