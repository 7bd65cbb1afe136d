// Plan registry endpoints (interface "Plans"): parse -> call shared/registry -> map. The credits routes share
// the `/protocol/plans/...` space (`/mint`, `/redeem`, `/{planId}/order`, ...), so a planId segment that is not
// an integer first lets any later route of the same shape answer, and is a plan 404 only if none does.
import type { Router, RouterContext } from '@koa/router';
import type { Next } from 'koa';
import {
  createPlan,
  getPlan,
  listOwnPlans,
  listPlanAgents,
  requirePlanId,
  setPlanListed,
  updatePlan,
} from '../../shared/registry/plans.js';
import { Activate, PlanInput, PlanUpdate, planIdOf } from '../../shared/registry/schemas.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery, SortedPageQuery } from '../http/pagination.js';
import { type AdminState, principalOf } from '../http/state.js';
import { parse } from '../http/validate.js';

type PlanHandler = (ctx: RouterContext<AdminState>, planId: number) => Promise<void>;

/** Runs `handler` for an integer planId; otherwise defers to later routes and 404s if none answered. */
const withPlanId =
  (handler: PlanHandler) =>
  async (ctx: RouterContext<AdminState>, next: Next): Promise<void> => {
    const planId = planIdOf(ctx.params.planId ?? '');
    if (planId !== undefined) return handler(ctx, planId);
    await next();
    if (ctx.body === undefined) requirePlanId(ctx.params.planId);
  };

export function plansRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const svc = deps.ctx;

  router.post('/protocol/plans', async (ctx) => {
    const input = parse(PlanInput, ctx.request.body);
    ctx.body = await createPlan(svc, principalOf(ctx).userId, input);
  });

  router.get('/protocol/plans', async (ctx) => {
    const page = parse(SortedPageQuery, ctx.query, 'query');
    const { items, ...rest } = await listOwnPlans(svc, principalOf(ctx).userId, page);
    ctx.body = { ...rest, plans: items };
  });

  router.get(
    '/protocol/plans/:planId',
    withPlanId(async (ctx, planId) => {
      ctx.body = await getPlan(svc, principalOf(ctx).userId, planId);
    }),
  );

  router.put(
    '/protocol/plans/:planId',
    withPlanId(async (ctx, planId) => {
      const update = parse(PlanUpdate, ctx.request.body);
      await updatePlan(svc, principalOf(ctx).userId, planId, update);
      ctx.body = { success: true };
    }),
  );

  router.put(
    '/protocol/plans/:planId/list/:activate',
    withPlanId(async (ctx, planId) => {
      const listed = parse(Activate, ctx.params.activate, 'path.activate');
      await setPlanListed(svc, principalOf(ctx).userId, planId, listed);
      ctx.body = { success: true };
    }),
  );

  router.get(
    '/protocol/plans/:planId/agents',
    withPlanId(async (ctx, planId) => {
      const page = parse(PageQuery, ctx.query, 'query');
      const { items, ...rest } = await listPlanAgents(svc, principalOf(ctx).userId, planId, page);
      ctx.body = { ...rest, agents: items };
    }),
  );
}
