// The API description of the agent and plan registry (admin/routes/agents.ts, plans.ts).
import { type Operations, json } from './operation.js';
import { Success } from './responses/common.js';
import {
  AgentPage,
  AgentRecord,
  AgentWithPlanCreated,
  AgentWithPlans,
  PlanPage,
  PlanRecord,
} from './responses/registry.js';
import {
  Activate,
  AgentInput,
  AgentUpdate,
  AgentWithPlanInput,
  PlanInput,
  PlanUpdate,
} from '../../shared/registry/requests.js';
import { PageQuery, SortedPageQuery } from '../http/pagination.js';
import { AgentIdPath, PlanIdPath } from './params.js';

const RECEIVER = '0x000000000000000000000000000000000000bEEF';
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

const agentExample = {
  name: 'Weather agent',
  description: 'Answers questions about the weather',
  tags: ['weather'],
  endpoints: [{ POST: 'https://agent.example.com/api/v1/ask' }],
  agentDefinitionUrl: 'https://agent.example.com/openapi.json',
};
const planExample = {
  name: 'Basic plan',
  description: 'Ten credits for one USDC',
  priceConfig: { priceType: 'FIXED_PRICE', tokenAddress: USDC, amounts: ['1000000'], receivers: [RECEIVER] },
  creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '1' },
  accessLimit: 'credits',
};

const agent = { agentId: AgentIdPath };
const plan = { planId: PlanIdPath };
const done = json('Done.', Success, { success: true });

export const REGISTRY_OPERATIONS: Operations = {
  'POST /api/v1/protocol/agents': {
    summary: 'Register an agent',
    tags: ['Agents'],
    request: { body: AgentInput, example: agentExample },
    responses: { 200: json('The agent.', AgentRecord) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/protocol/agents': {
    summary: 'List your agents',
    tags: ['Agents'],
    request: { query: SortedPageQuery },
    responses: { 200: json('A page of your agents.', AgentPage) },
    codes: ['BCK.HTTP.0400'],
  },
  'POST /api/v1/protocol/agents/plans': {
    summary: 'Register an agent with a plan',
    description: 'The agent and the plan are created and attached in one transaction.',
    tags: ['Agents', 'Plans'],
    request: {
      body: AgentWithPlanInput,
      example: {
        agentMetadata: { name: agentExample.name, description: agentExample.description, tags: agentExample.tags },
        agentApi: { endpoints: agentExample.endpoints, agentDefinitionUrl: agentExample.agentDefinitionUrl },
        planMetadata: { name: planExample.name, description: planExample.description },
        priceConfig: planExample.priceConfig,
        creditsConfig: planExample.creditsConfig,
        accessLimit: 'credits',
      },
    },
    responses: { 200: json('The agent and the plan.', AgentWithPlanCreated) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/protocol/agents/:agentId': {
    summary: 'Read an agent',
    description: 'A listed agent, or one of yours, with the plans attached to it that you may see.',
    tags: ['Agents'],
    request: { path: agent },
    responses: { 200: json('The agent.', AgentWithPlans) },
    codes: ['BCK.PROTOCOL.0004'],
  },
  'PUT /api/v1/protocol/agents/:agentId': {
    summary: 'Change an agent',
    description: 'Only the fields sent change; an unknown field is refused.',
    tags: ['Agents'],
    request: { path: agent, body: AgentUpdate, example: { description: 'Answers about the weather, worldwide' } },
    responses: { 200: done },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0004'],
  },
  'PUT /api/v1/protocol/agents/:agentId/list/:activate': {
    summary: 'List or unlist an agent',
    tags: ['Agents'],
    request: { path: { ...agent, activate: Activate } },
    responses: { 200: done },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0004'],
  },
  'POST /api/v1/protocol/agents/:agentId/plan/:planId': {
    summary: 'Attach a plan to an agent',
    description: 'Both must be yours.',
    tags: ['Agents', 'Plans'],
    request: { path: { ...agent, ...plan } },
    responses: { 200: done },
    codes: ['BCK.PROTOCOL.0003', 'BCK.PROTOCOL.0004'],
  },
  'DELETE /api/v1/protocol/agents/:agentId/plan/:planId': {
    summary: 'Detach a plan from an agent',
    tags: ['Agents', 'Plans'],
    request: { path: { ...agent, ...plan } },
    responses: { 200: done },
    codes: ['BCK.PROTOCOL.0003', 'BCK.PROTOCOL.0004', 'BCK.PROTOCOL.0040'],
  },
  'GET /api/v1/protocol/agents/:agentId/plans': {
    summary: "List an agent's plans",
    tags: ['Agents', 'Plans'],
    request: { path: agent, query: PageQuery },
    responses: { 200: json('A page of the plans attached to the agent that you may see.', PlanPage) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0004'],
  },

  'POST /api/v1/protocol/plans': {
    summary: 'Create a plan',
    tags: ['Plans'],
    request: { body: PlanInput, example: planExample },
    responses: { 200: json('The plan.', PlanRecord) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/protocol/plans': {
    summary: 'List your plans',
    tags: ['Plans'],
    request: { query: SortedPageQuery },
    responses: { 200: json('A page of your plans.', PlanPage) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/protocol/plans/:planId': {
    summary: 'Read a plan',
    description: 'A listed plan, or one of yours.',
    tags: ['Plans'],
    request: { path: plan },
    responses: { 200: json('The plan.', PlanRecord) },
    codes: ['BCK.PROTOCOL.0003'],
  },
  'PUT /api/v1/protocol/plans/:planId': {
    summary: 'Change a plan',
    description: 'Only the fields sent change; `priceConfig` and `creditsConfig` are replaced whole.',
    tags: ['Plans'],
    request: { path: plan, body: PlanUpdate, example: { name: 'Basic plan (2026)' } },
    responses: { 200: done },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003'],
  },
  'PUT /api/v1/protocol/plans/:planId/list/:activate': {
    summary: 'List or unlist a plan',
    description: 'Subscribers of an unlisted plan keep spending their credits; nobody can buy it.',
    tags: ['Plans'],
    request: { path: { ...plan, activate: Activate } },
    responses: { 200: done },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003'],
  },
  'GET /api/v1/protocol/plans/:planId/agents': {
    summary: "List a plan's agents",
    tags: ['Plans', 'Agents'],
    request: { path: plan, query: PageQuery },
    responses: { 200: json('A page of the agents the plan is attached to that you may see.', AgentPage) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003'],
  },
};
