// Plan registry endpoints: parse -> call shared/registry -> map. A planId that is not an
// integer names no plan: 404 BCK.PROTOCOL.0003 (the credits routes' literal segments, `/mint`, `/redeem`, are
// routes of other methods, so no request of these methods is meant for them).
import type { ActingUser, ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY, API_KEY_OR_ACCOUNT_ACCESS } from '../../shared/auth/route-callers.js';
import {
  createPlan,
  getPlan,
  listOwnPlans,
  listPlanAgents,
  requirePlanId,
  setPlanListed,
  updatePlan,
} from '../../shared/registry/plans.js';
import { Activate, PlanInput, PlanUpdate } from '../../shared/registry/requests.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery, SortedPageQuery } from '../http/pagination.js';
import { type AdminRoute, type AdminRouterContext, get, post, put } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

export function plansRoutes({ ctx: svc }: AdminDeps): AdminRoute[] {
  const create = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await createPlan(svc, caller.userId, parse(PlanInput, ctx.request.body));
  };
  const list = async (ctx: Ctx, caller: ActingUser) => {
    const page = parse(SortedPageQuery, ctx.query, 'query');
    const { items, ...rest } = await listOwnPlans(svc, caller.userId, page);
    ctx.body = { ...rest, plans: items };
  };
  const read = async (ctx: Ctx, caller: ActingUser) => {
    ctx.body = await getPlan(svc, caller.userId, requirePlanId(ctx.params.planId));
  };
  const update = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const planId = requirePlanId(ctx.params.planId);
    await updatePlan(svc, caller.userId, planId, parse(PlanUpdate, ctx.request.body));
    ctx.body = { success: true };
  };
  const setListed = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const planId = requirePlanId(ctx.params.planId);
    await setPlanListed(svc, caller.userId, planId, parse(Activate, ctx.params.activate, 'path.activate'));
    ctx.body = { success: true };
  };
  const agents = async (ctx: Ctx, caller: ActingUser) => {
    const planId = requirePlanId(ctx.params.planId);
    const page = parse(PageQuery, ctx.query, 'query');
    const { items, ...rest } = await listPlanAgents(svc, caller.userId, planId, page);
    ctx.body = { ...rest, agents: items };
  };

  return [
    post('/protocol/plans', API_KEY, create),
    get('/protocol/plans', API_KEY_OR_ACCOUNT_ACCESS, list),
    get('/protocol/plans/:planId', API_KEY_OR_ACCOUNT_ACCESS, read),
    put('/protocol/plans/:planId', API_KEY, update),
    put('/protocol/plans/:planId/list/:activate', API_KEY, setListed),
    get('/protocol/plans/:planId/agents', API_KEY_OR_ACCOUNT_ACCESS, agents),
  ];
}
