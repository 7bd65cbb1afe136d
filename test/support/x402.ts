// Builders for the x402 permission tests: a seller (plan + agent, attached), a subscriber, permission bodies and
// the paymentRequired a seller's 402 would carry, so each test states only what it is about.
import type { CreatedUser } from '../../shared/accounts/users.js';
import { faucet } from '../../shared/settlement/token-ledger.js';
import type { ApiClient } from './http.js';
import {
  type AgentRecord,
  type PlanRecord,
  TOKEN_ADDRESS,
  attachPlan,
  createAgent,
  createPlan,
} from './registry-builders.js';
import type { Stack } from './stack.js';

export const SANDBOX_NETWORK = 'eip155:84532';

export type User = CreatedUser & { api: ApiClient };

export interface Seller {
  user: User;
  plan: PlanRecord;
  agent: AgentRecord;
}

/** A seller with one plan (default: 1 USDC for 10 credits) attached to one agent. */
export async function seller(stack: Stack, planOverrides: Record<string, unknown> = {}): Promise<Seller> {
  const user = await stack.user();
  const plan = await createPlan(user.api, planOverrides);
  const agent = await createAgent(user.api);
  await attachPlan(user.api, agent.agentId, plan.planId);
  return { user, plan, agent };
}

export interface PermissionOptions {
  planId: string;
  agentId?: string;
  scheme?: 'svc:erc4337' | 'svc:card-delegation' | string;
  network?: string;
  delegationId?: string;
  httpVerb?: string;
  url?: string;
}

export function permissionBody(o: PermissionOptions): Record<string, unknown> {
  const extra: Record<string, string> = {};
  if (o.agentId !== undefined) extra.agentId = o.agentId;
  if (o.httpVerb !== undefined) extra.httpVerb = o.httpVerb;
  return {
    resource: { url: o.url ?? 'https://agent.example.com/api/v1/ask', description: 'Ask the agent' },
    accepted: {
      scheme: o.scheme ?? 'svc:erc4337',
      network: o.network ?? SANDBOX_NETWORK,
      planId: o.planId,
      ...(Object.keys(extra).length === 0 ? {} : { extra }),
    },
    ...(o.delegationId === undefined ? {} : { delegationConfig: { delegationId: o.delegationId } }),
  };
}

/** The PaymentRequired object a seller answers with for this plan (and agent). */
export function paymentRequired(o: {
  planId: string;
  agentId?: string;
  scheme?: string;
  network?: string;
}): Record<string, unknown> {
  return {
    x402Version: 2,
    error: 'Payment required',
    resource: { url: 'https://agent.example.com/api/v1/ask', description: 'Ask the agent' },
    accepts: [
      {
        scheme: o.scheme ?? 'svc:erc4337',
        network: o.network ?? SANDBOX_NETWORK,
        planId: o.planId,
        ...(o.agentId === undefined ? {} : { extra: { agentId: o.agentId } }),
      },
    ],
    extensions: {},
  };
}

export async function mint(
  owner: ApiClient,
  planId: string,
  holderAddress: string,
  amount: number | string,
): Promise<void> {
  const r = await owner.post('/protocol/plans/mint', { planId, holderAddress, amount: String(amount) });
  if (r.status !== 200) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
}

export async function balance(api: ApiClient, planId: string, holderAddress: string): Promise<string> {
  const r = await api.get(`/protocol/plans/${planId}/balance/${holderAddress}`);
  if (r.status !== 200) throw new Error(`balance failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.balance as string;
}

/** Sandbox USDC for a custodial wallet (what an erc4337 auto-order pays with). */
export async function fundUsdc(stack: Stack, address: string, atomic: bigint): Promise<void> {
  await faucet(stack.ctx, address, TOKEN_ADDRESS, atomic);
}

export async function delegation(api: ApiClient, body: Record<string, unknown>): Promise<string> {
  const r = await api.post('/delegation/create', { durationSecs: 3600, ...body });
  if (r.status !== 201) throw new Error(`delegation failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.delegationId as string;
}

/** Creates a permission and returns its 201 body (throws on any other status). */
export async function permission(
  api: ApiClient,
  o: PermissionOptions,
): Promise<{ permissionHash: string; x402AccessToken: string } & Record<string, unknown>> {
  const r = await api.post('/x402/permissions', permissionBody(o));
  if (r.status !== 201) throw new Error(`permission failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * The erc4337 auto-order set-up: a seller with a plan (1 USDC, 100 cents, for 10 credits) and a subscriber holding
 * no credits, with `usdc` atomic sandbox USDC in their wallet, a delegation capped at `limitCents` and a permission
 * for the plan on it.
 */
export async function autoOrderSubscriber(stack: Stack, usdc: bigint, limitCents: number) {
  const s = await seller(stack);
  const sub = await stack.user();
  await fundUsdc(stack, sub.walletAddress, usdc);
  const d = await delegation(sub.api, { provider: 'erc4337', spendingLimitCents: limitCents });
  const p = await permission(sub.api, { planId: s.plan.planId, delegationId: d });
  return { s, sub, d, p };
}

export const decode = (token: string): Record<string, any> => JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
export const encode = (obj: unknown): string => Buffer.from(JSON.stringify(obj), 'utf8').toString('base64');
