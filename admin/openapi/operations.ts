// The operation registry: what the API description says of every route of both processes, keyed as the route
// tables spell them (`METHOD template`). One module per area; a key in two of them is a mistake, refused here.
import type { Operations } from './operation.js';
import { CATALOG_OPERATIONS } from './catalog.js';
import { CREDITS_OPERATIONS } from './credits.js';
import { DELEGATION_OPERATIONS } from './delegations.js';
import { OAUTH_OPERATIONS } from './oauth.js';
import { ORGANIZATION_OPERATIONS } from './organizations.js';
import { PAGE_OPERATIONS } from './pages.js';
import { REGISTRY_OPERATIONS } from './registry.js';
import { ROUTER_OPERATIONS } from './router.js';
import { SERVICE_OPERATIONS } from './service.js';
import { X402_OPERATIONS } from './x402.js';
import { InvariantError } from '../../shared/errors/invariant.js';

function merged(...parts: Operations[]): Operations {
  const out: Record<string, Operations[string]> = {};
  for (const part of parts) {
    for (const [key, op] of Object.entries(part)) {
      if (key in out) throw new InvariantError(`the operation ${key} is described twice`);
      out[key] = op;
    }
  }
  return out;
}

export const OPERATIONS: Operations = merged(
  SERVICE_OPERATIONS,
  OAUTH_OPERATIONS,
  PAGE_OPERATIONS,
  REGISTRY_OPERATIONS,
  CREDITS_OPERATIONS,
  DELEGATION_OPERATIONS,
  X402_OPERATIONS,
  ORGANIZATION_OPERATIONS,
  ROUTER_OPERATIONS,
  CATALOG_OPERATIONS,
);
