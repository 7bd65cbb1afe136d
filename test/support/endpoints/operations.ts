// Samples of the probes (admin, outside /api/v1): public, no body, an unknown query parameter is ignored.
import type { EndpointCase } from './index.js';

export const HEALTH_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'GET /healthz': { sample: async () => ({ as: 'seller', query: { probe: 'x' } }), kinds: { 'query.probe': 'opaque' } },
  'GET /readyz': { sample: async () => ({ as: 'seller', query: { probe: 'x' } }), kinds: { 'query.probe': 'opaque' } },
};
