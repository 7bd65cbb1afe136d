// Test data builders for the agent and plan registry (x402's testDataBuilders habit): a valid body by default,
// any field overridable, so a test states only what it is about.
import type { ApiClient } from './http.js';

/** A valid, deterministic EVM address derived from a small number (checksum-free lowercase form). */
export const testAddress = (n: number): string => `0x${n.toString(16).padStart(40, '0')}`;

export const TOKEN_ADDRESS = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'; // USDC on Base Sepolia

// The wire shapes the tests read back: the service's own record types (shared/registry/records.ts).
import type { AgentRecord, PlanRecord } from '../../shared/registry/records.js';

export type { AgentRecord, PlanRecord };

type Overrides = Record<string, unknown>;

/** Body of POST /protocol/plans. Override nested configs whole (e.g. `{ priceConfig: {...} }`). */
export function planBody(overrides: Overrides = {}): Record<string, unknown> {
  return {
    name: 'Basic plan',
    description: 'Ten credits for a small price',
    priceConfig: {
      priceType: 'FIXED_PRICE',
      tokenAddress: TOKEN_ADDRESS,
      amounts: ['1000000'],
      receivers: [testAddress(0xbeef)],
    },
    creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '1' },
    accessLimit: 'credits',
    ...overrides,
  };
}

/** Body of POST /protocol/agents. */
export function agentBody(overrides: Overrides = {}): Record<string, unknown> {
  return {
    name: 'Weather agent',
    description: 'Answers questions about the weather',
    tags: ['weather', 'test'],
    endpoints: [
      { POST: 'https://agent.example.com/api/v1/ask' },
      { GET: 'https://agent.example.com/api/v1/tasks/:taskId' },
    ],
    agentDefinitionUrl: 'https://agent.example.com/openapi.json',
    ...overrides,
  };
}

async function created<T>(what: string, r: { status: number; body: unknown }): Promise<T> {
  if (r.status !== 200) throw new Error(`creating ${what} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as T;
}

/** Creates a plan as the api's user; returns the plan record (planId is a decimal string). */
export async function createPlan(api: ApiClient, overrides: Overrides = {}): Promise<PlanRecord> {
  return created<PlanRecord>('plan', await api.post('/protocol/plans', planBody(overrides)));
}

/** Creates an agent as the api's user; returns the agent record. */
export async function createAgent(api: ApiClient, overrides: Overrides = {}): Promise<AgentRecord> {
  return created<AgentRecord>('agent', await api.post('/protocol/agents', agentBody(overrides)));
}

/** Attaches a plan to an agent (both owned by the api's user). */
export async function attachPlan(api: ApiClient, agentId: string, planId: string): Promise<void> {
  const r = await api.post(`/protocol/agents/${encodeURIComponent(agentId)}/plan/${planId}`);
  if (r.status !== 200) throw new Error(`attach failed: ${r.status} ${JSON.stringify(r.body)}`);
}
