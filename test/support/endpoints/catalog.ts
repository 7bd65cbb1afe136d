// Samples of the catalog: public reads of services the operator added (each sample adds its own).
import { addCatalogEntry } from '../../../shared/catalog/entries.js';
import type { EndpointCase, EndpointFixtures } from './index.js';
import { PUBLIC_DOCUMENT } from './shared-samples.js';

async function service(f: EndpointFixtures): Promise<string> {
  const slug = f
    .fresh('svc')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 60);
  await addCatalogEntry(f.stack.ctx, slug, {
    url: f.merchantUrl,
    name: 'Weather',
    description: 'Forecasts',
    category: 'weather',
    protocol: 'x402',
    priceHint: '0.01 USDC',
  });
  return slug;
}

export const CATALOG_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'GET /api/v1/catalog/services': {
    sample: async (f) => {
      await service(f);
      return { as: 'subscriber', query: { query: 'weath', category: 'weather', page: '1', offset: '10' } };
    },
  },
  'GET /api/v1/catalog/services/:slug': {
    sample: async (f) => ({ as: 'subscriber', params: { slug: await service(f) } }),
  },
  'GET /api/v1/catalog/categories': PUBLIC_DOCUMENT,
  'GET /.well-known/agent-services-catalog.json': PUBLIC_DOCUMENT,
};
