// Samples of the API description and its reference page (public, no body).
import type { EndpointCase } from './index.js';
import { PUBLIC_DOCUMENT } from './shared-samples.js';

export const API_REFERENCE_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'GET /api/v1/openapi.json': PUBLIC_DOCUMENT,
  'GET /docs': PUBLIC_DOCUMENT,
  'GET /docs/rapidoc-min.js': PUBLIC_DOCUMENT,
};
