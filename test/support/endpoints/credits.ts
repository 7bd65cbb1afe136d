// Samples of credits and access: minting, ordering, redeeming, the access token and the agent requests.
import type { EndpointCase } from './index.js';

/** The endpoint the fixtures' agent requests are initialized for. */
export const ASK = 'https://agent.example.com/api/v1/ask';

export const CREDITS_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
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
};
