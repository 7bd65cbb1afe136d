// Every route of the admin process, as declarations (admin/http/route.ts), and the one router they are mounted on.
import { Router, RouterEvents } from '@koa/router';
import { PUBLIC } from '../../shared/auth/route-callers.js';
import { readiness } from '../../shared/readiness.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type RouteRuntime, get, underPrefix } from '../http/route.js';
import type { AdminState } from '../http/state.js';
import { unmatched } from '../middleware/unmatched.js';
import { accessRoutes } from './access-tokens.js';
import { agentsRoutes } from './agents.js';
import { catalogDocumentRoute, catalogRoutes } from './catalog.js';
import { creditsRoutes } from './credits.js';
import { delegationsRoutes } from './delegations.js';
import { oauthRoutes } from './oauth.js';
import { openApiRoutes } from './openapi.js';
import { orgBudgetsRoutes } from './org-budgets.js';
import { orgMembersRoutes } from './org-members.js';
import { orgWalletsRoutes } from './org-wallets.js';
import { pageRoutes } from './pages.js';
import { plansRoutes } from './plans.js';
import { wellKnownRoutes } from './well-known.js';
import { x402Routes } from './x402.js';

export const API_PREFIX = '/api/v1';

export function adminRoutes(deps: AdminDeps): AdminRoute[] {
  const routes: AdminRoute[] = [
    get('/healthz', PUBLIC, async (ctx) => {
      ctx.body = { status: 'ok', service: 'admin' };
    }),
    get('/readyz', PUBLIC, async (ctx) => {
      const answer = await readiness('admin', deps.lifecycle, deps.ctx);
      ctx.status = answer.status;
      ctx.body = answer.body;
    }),
    ...wellKnownRoutes(deps),
    catalogDocumentRoute(deps),
    ...oauthRoutes(deps),
    ...pageRoutes(deps),
    ...underPrefix(API_PREFIX, [
      ...agentsRoutes(deps),
      ...plansRoutes(deps),
      ...creditsRoutes(deps),
      ...accessRoutes(deps),
      ...delegationsRoutes(deps),
      ...x402Routes(deps),
      // Static paths (/organizations/my-memberships) are declared before the parameterized ones.
      ...orgMembersRoutes(deps),
      ...orgWalletsRoutes(deps),
      ...orgBudgetsRoutes(deps),
      ...catalogRoutes(deps),
    ]),
    // The API description lists this very table.
    ...openApiRoutes(deps, () => routes),
  ];
  return routes;
}

/**
 * Mounts the declarations. Matching is exact, as in the proxy's route table: letter case and a trailing slash are
 * significant (@koa/router's defaults ignore both), so each route has one spelling, and any other is unmatched.
 */
export function mountRoutes(routes: readonly AdminRoute[], runtime: RouteRuntime): Router<AdminState> {
  const router = new Router<AdminState>({ sensitive: true, strict: true });
  for (const r of routes) {
    const run = (ctx: Parameters<AdminRoute['run']>[0]) => r.run(ctx, runtime);
    if (r.method === 'GET') router.get(r.path, run);
    else if (r.method === 'POST') router.post(r.path, run);
    else if (r.method === 'PUT') router.put(r.path, run);
    else if (r.method === 'PATCH') router.patch(r.path, run);
    else router.delete(r.path, run);
  }
  router.on(RouterEvents.NotFound, unmatched(runtime.credentials));
  return router;
}
