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
import { createClient } from '../../shared/oauth/clients.js';
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

/** A public discovery document: no body, an unknown query parameter is ignored. */
const PUBLIC_DOCUMENT: EndpointCase = {
  sample: async () => ({ as: 'seller', query: { probe: 'x' } }),
  kinds: { 'query.probe': 'opaque' },
};

export const ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  // Admin, outside /api/v1.
  'GET /healthz': { sample: async () => ({ as: 'seller', query: { probe: 'x' } }), kinds: { 'query.probe': 'opaque' } },
  'GET /.well-known/jwks.json': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-authorization-server': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource': PUBLIC_DOCUMENT,
  'GET /.well-known/oauth-protected-resource/api/v1': PUBLIC_DOCUMENT,
  'POST /oauth/connect/details': {
    sample: async (f) => {
      const c = await createClient(f.stack.ctx, { name: 'Fuzz connector', redirectUris: ['https://c.example/cb'] });
      return { as: 'subscriber', body: { client_id: c.clientId } };
    },
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
  '* /api/v1/router/proxy': { sample: async (f) => proxySample(f) },
  '* /api/v1/proxy': { sample: async (f) => proxySample(f) },
  '* /proxy': { sample: async (f) => proxySample(f) },
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
