// Sample parts that the tables of several features use.
import type { EndpointCase } from './index.js';

/** The first page of a listing. */
export const page = { page: '1', offset: '10' };

/** A public discovery document: no body, an unknown query parameter is ignored. */
export const PUBLIC_DOCUMENT: EndpointCase = {
  sample: async () => ({ as: 'seller', query: { probe: 'x' } }),
  kinds: { 'query.probe': 'opaque' },
};
