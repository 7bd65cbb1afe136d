// Samples of the registry: agents and plans, the seller's (the fixtures' agent and plans).
import type { EndpointCase } from './index.js';
import { agentBody, planBody } from '../registry-builders.js';
import { page } from './shared-samples.js';

export const REGISTRY_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
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
};
