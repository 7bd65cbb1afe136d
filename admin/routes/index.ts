import { Router } from '@koa/router';
import type { AdminDeps } from '../deps.js';
import type { AdminState } from '../http/state.js';
import { accessRoutes } from './access.js';
import { agentsRoutes } from './agents.js';
import { creditsRoutes } from './credits.js';
import { delegationsRoutes } from './delegations.js';
import { plansRoutes } from './plans.js';
import { wellKnownRoutes } from './well-known.js';
import { x402Routes } from './x402.js';

export function buildRouter(deps: AdminDeps): Router<AdminState> {
  const root = new Router<AdminState>();
  root.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', service: 'admin' };
  });
  wellKnownRoutes(root, deps);

  const api = new Router<AdminState>({ prefix: '/api/v1' });
  agentsRoutes(api, deps);
  plansRoutes(api, deps);
  creditsRoutes(api, deps);
  accessRoutes(api, deps);
  delegationsRoutes(api, deps);
  x402Routes(api, deps);
  root.use(api.routes());
  return root;
}
