// What the agent and plan endpoints answer: the wire records of shared/registry/records.ts.
import { z } from 'zod';
import type { AgentWithPlan } from '../../../shared/registry/agent-with-plan.js';
import type { AgentRecord as AgentRecordType, PlanRecord as PlanRecordType } from '../../../shared/registry/records.js';
import { HTTP_VERBS } from '../../../shared/registry/requests.js';
import { Address, Decimal, type Fits, Timestamp, named, pageOf } from './common.js';

const AgentId = z.string().regex(/^did:payroute:(sandbox|live):[0-9a-f]{32}$/);
const PlanId = z.string().regex(/^[1-9][0-9]*$/);

export const AgentRecord = named(
  'AgentRecord',
  z.object({
    agentId: AgentId,
    name: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    /** Each endpoint maps HTTP verbs to a URL. */
    endpoints: z.array(z.partialRecord(z.enum(HTTP_VERBS), z.string())),
    agentDefinitionUrl: z.string(),
    listed: z.boolean(),
    isOwner: z.boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  'An agent: its endpoints and whether it is listed; `isOwner` is relative to the caller.',
);

export const PlanRecord = named(
  'PlanRecord',
  z.object({
    planId: PlanId,
    name: z.string(),
    description: z.string(),
    priceConfig: z.object({
      priceType: z.literal('FIXED_PRICE'),
      tokenAddress: Address,
      /** One amount (atomic units of the token) per receiver. */
      amounts: z.array(Decimal),
      receivers: z.array(Address),
    }),
    creditsConfig: z.object({ creditsType: z.literal('FIXED'), amount: Decimal, minAmount: Decimal }),
    accessLimit: z.literal('credits'),
    listed: z.boolean(),
    isOwner: z.boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  'A plan: what it costs (paid to its receivers) and how many credits an order grants.',
);

export const AgentWithPlans = named(
  'AgentWithPlans',
  AgentRecord.extend({ plans: z.array(PlanRecord) }),
  'An agent with the plans attached to it that the caller may see.',
);

export const AgentWithPlanCreated = named(
  'AgentWithPlanCreated',
  z.object({ agentId: AgentId, planId: PlanId, agent: AgentRecord, plan: PlanRecord }),
  'The agent and the plan created together, attached to each other.',
);

export const AgentPage = named('AgentPage', pageOf('agents', AgentRecord), 'A page of agents.');
export const PlanPage = named('PlanPage', pageOf('plans', PlanRecord), 'A page of plans.');

export type AgentRecordFits = Fits<typeof AgentRecord, AgentRecordType>;
export type PlanRecordFits = Fits<typeof PlanRecord, PlanRecordType>;
export type AgentWithPlanFits = Fits<typeof AgentWithPlanCreated, AgentWithPlan>;
