// Samples of the delegations: the subscriber's (the fixtures' delegation, and a spare one that may be revoked).
import type { EndpointCase } from './index.js';
import { testAddress } from '../registry-builders.js';
import { page } from './shared-samples.js';

export const DELEGATIONS_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
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
};
