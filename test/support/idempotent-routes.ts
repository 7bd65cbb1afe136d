// The seven money-moving admin POSTs declared idempotent, each as a case the idempotency tests run the same way:
// a fresh world for the route, the request, a different request (body or path), a refused request (a 4xx), and
// how to count the route's effect in the database (its rows: ledger, order, burn, delegation, permission).
import { getAddress } from 'viem';
import { faucet } from '../../shared/settlement/token-ledger.js';
import type { ApiResponse } from './http.js';
import { TOKEN_ADDRESS, attachPlan, createAgent, createPlan } from './registry-builders.js';
import type { Stack } from './stack.js';
import { type User, mint, permissionBody } from './x402.js';

const ASK = 'https://agent.example.com/api/v1/ask';

export interface Request {
  readonly path: string;
  readonly body?: Record<string, unknown>;
}

export interface Prepared {
  /** Who calls the route. */
  readonly caller: User;
  readonly request: Request;
  /** The status of a first successful answer. */
  readonly status: number;
  /** Same route, different body or path parameters. */
  readonly other: Request;
  /** Same route, refused with a 4xx. */
  readonly refused: Request;
  /** How many effects two identical requests WITHOUT a key make (a burn key already makes a redeem once). */
  readonly effectsWithoutKey: number;
  /** How many times the route took effect: its rows (a ledger row per mint, an order, a burn, a delegation...). */
  effects(): Promise<number>;
}

export interface RouteCase {
  readonly name: string;
  prepare(s: Stack): Promise<Prepared>;
}

async function count(s: Stack, sql: string, params: unknown[]): Promise<number> {
  const rows: Record<string, unknown>[] = await s.ctx.db.em().execute(sql, params);
  return Number(rows[0]?.n);
}

export function send(c: User, r: Request, key?: string): Promise<ApiResponse<any>> {
  return c.api.call('POST', r.path, r.body ?? undefined, key === undefined ? {} : { 'idempotency-key': key });
}

const creditRows = (s: Stack, planId: string, holder: string) =>
  count(s, 'select count(*) as n from credit_ledger where plan_id = ? and holder_address = ?', [
    Number(planId),
    holder,
  ]);

/** A plan owner, a holder with `credits` of it, an agent, and an initialize to burn against. */
async function burnable(s: Stack, credits: number) {
  const owner = await s.user();
  const holder = await s.user();
  const plan = await createPlan(owner.api, { creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '1' } });
  const agent = await createAgent(owner.api);
  await attachPlan(owner.api, agent.agentId, plan.planId);
  const minted = await owner.api.post('/protocol/plans/mint', {
    planId: plan.planId,
    holderAddress: holder.walletAddress,
    amount: credits,
  });
  if (minted.status !== 200) throw new Error(`mint: ${minted.text}`);
  const accessToken = (await holder.api.get(`/protocol/token/${plan.planId}/${agent.agentId}`)).body.accessToken;
  const init = await owner.api.post(`/protocol/agents/initialize/${agent.agentId}`, {
    accessToken,
    endpoint: ASK,
    httpVerb: 'POST',
    maxCredits: 5,
  });
  if (init.status !== 200) throw new Error(`initialize: ${init.text}`);
  const { agentRequestId, proof } = init.body as { agentRequestId: string; proof: string };
  const burns = () => count(s, 'select count(*) as n from credit_burn where agent_request_id = ?', [agentRequestId]);
  return { owner, holder, plan, agentRequestId, proof, burns };
}

const mintCase = (name: string, extra: Record<string, unknown>): RouteCase => ({
  name,
  async prepare(s) {
    const owner = await s.user();
    const holder = getAddress(`0x${'42'.repeat(20)}`);
    const plan = await createPlan(owner.api);
    const body = { planId: plan.planId, holderAddress: holder, amount: '7', ...extra };
    return {
      caller: owner,
      request: { path: `/protocol/plans/${name}`, body },
      status: 200,
      other: { path: `/protocol/plans/${name}`, body: { ...body, amount: '8' } },
      refused: { path: `/protocol/plans/${name}`, body: { ...body, planId: '2000000000' } },
      effectsWithoutKey: 2,
      effects: () => creditRows(s, plan.planId, holder),
    };
  },
});

export const ROUTE_CASES: readonly RouteCase[] = [
  {
    name: 'order',
    async prepare(s) {
      const owner = await s.user();
      const buyer = await s.user();
      const plan = await createPlan(owner.api);
      const other = await createPlan(owner.api);
      await faucet(s.ctx, buyer.walletAddress, getAddress(TOKEN_ADDRESS), 10_000_000n);
      return {
        caller: buyer,
        request: { path: `/protocol/plans/${plan.planId}/order` },
        status: 200,
        other: { path: `/protocol/plans/${other.planId}/order` },
        refused: { path: '/protocol/plans/2000000000/order' },
        effectsWithoutKey: 2,
        effects: () => count(s, 'select count(*) as n from plan_order where buyer_user_id = ?', [buyer.userId]),
      };
    },
  },
  mintCase('mint', {}),
  mintCase('mintExpirable', { durationSecs: 3600 }),
  {
    name: 'redeem',
    async prepare(s) {
      const w = await burnable(s, 10);
      const body = { planId: w.plan.planId, holderAddress: w.holder.walletAddress, amount: 2, proof: w.proof };
      return {
        caller: w.owner,
        request: { path: '/protocol/plans/redeem', body },
        status: 200,
        other: { path: '/protocol/plans/redeem', body: { ...body, amount: 3 } },
        refused: { path: '/protocol/plans/redeem', body: { ...body, amount: 6 } },
        effectsWithoutKey: 1,
        effects: w.burns,
      };
    },
  },
  {
    name: 'agent-sub-tasks',
    async prepare(s) {
      const w = await burnable(s, 10);
      const body = { agentRequestId: w.agentRequestId, creditsToRedeem: '2', tag: 'step-1' };
      return {
        caller: w.owner,
        request: { path: '/protocol/agent-sub-tasks', body },
        status: 200,
        other: { path: '/protocol/agent-sub-tasks', body: { ...body, creditsToRedeem: '1' } },
        refused: { path: '/protocol/agent-sub-tasks', body: { ...body, creditsToRedeem: '6' } },
        effectsWithoutKey: 1,
        effects: w.burns,
      };
    },
  },
  {
    name: 'delegation create',
    async prepare(s) {
      const user = await s.user();
      const body = { provider: 'erc4337', spendingLimitCents: 1000, durationSecs: 3600 };
      return {
        caller: user,
        request: { path: '/delegation/create', body },
        status: 201,
        other: { path: '/delegation/create', body: { ...body, spendingLimitCents: 1001 } },
        refused: { path: '/delegation/create', body: { ...body, apiKeyId: '0194f3f6-2a5e-7c4e-9b1a-6f1d2c3b4a59' } },
        effectsWithoutKey: 2,
        effects: () => count(s, 'select count(*) as n from delegation where user_id = ?', [user.userId]),
      };
    },
  },
  {
    name: 'x402 permission create',
    async prepare(s) {
      const owner = await s.user();
      const sub = await s.user();
      const plan = await createPlan(owner.api);
      // A permission without a delegation needs credits of the plan already held.
      await mint(owner.api, plan.planId, sub.walletAddress, 10);
      const body = permissionBody({ planId: plan.planId });
      return {
        caller: sub,
        request: { path: '/x402/permissions', body },
        status: 201,
        other: { path: '/x402/permissions', body: permissionBody({ planId: plan.planId, url: `${ASK}/other` }) },
        refused: { path: '/x402/permissions', body: permissionBody({ planId: '2000000000' }) },
        effectsWithoutKey: 2,
        effects: () => count(s, 'select count(*) as n from x402_permission where user_id = ?', [sub.userId]),
      };
    },
  },
];
