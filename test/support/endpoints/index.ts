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
//
// The samples stand in one file per feature beside this one; this file puts them in one table and builds the
// fixtures they share.
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../http.js';
import type { Running } from '../merchants/listen.js';
import { attachPlan, createAgent, createPlan } from '../registry-builders.js';
import { USDC, createDelegation, fund, scriptedMerchant } from '../router-fixtures.js';
import type { Stack } from '../stack.js';
import { delegation, mint, permission } from '../x402.js';
import { API_REFERENCE_ENDPOINTS } from './api-reference.js';
import { ASK, CREDITS_ENDPOINTS } from './credits.js';
import { DELEGATIONS_ENDPOINTS } from './delegations.js';
import { OAUTH_ENDPOINTS, commerceTokens } from './oauth.js';
import { HEALTH_ENDPOINTS } from './operations.js';
import { ORG_BUDGETS_ENDPOINTS } from './org-budgets.js';
import { ORG_MEMBERS_ENDPOINTS } from './org-members.js';
import { ORG_WALLETS_ENDPOINTS } from './org-wallets.js';
import { PAGES_ENDPOINTS } from './pages.js';
import { REGISTRY_ENDPOINTS } from './registry.js';
import { ROUTER_ENDPOINTS, offer } from './router.js';
import { CATALOG_ENDPOINTS } from './catalog.js';
import { X402_ENDPOINTS } from './x402.js';

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

export const ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  ...HEALTH_ENDPOINTS,
  ...API_REFERENCE_ENDPOINTS,
  ...OAUTH_ENDPOINTS,
  ...PAGES_ENDPOINTS,
  ...REGISTRY_ENDPOINTS,
  ...CREDITS_ENDPOINTS,
  ...DELEGATIONS_ENDPOINTS,
  ...X402_ENDPOINTS,
  ...ROUTER_ENDPOINTS,
  ...CATALOG_ENDPOINTS,
  // Organizations: each sample makes its own organization (the seller its Admin).
  ...ORG_MEMBERS_ENDPOINTS,
  ...ORG_WALLETS_ENDPOINTS,
  ...ORG_BUDGETS_ENDPOINTS,
};

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
