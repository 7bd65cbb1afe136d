// Samples of the x402 permissions and of verify and settle (the fixtures' permission, and a spare one that may be
// revoked).
import type { EndpointCase } from './index.js';
import { paymentRequired, permissionBody } from '../x402.js';
import { page } from './shared-samples.js';

export const X402_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
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
};
