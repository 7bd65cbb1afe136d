// Agent registry endpoints: parse -> call shared/registry -> map.
import type { ActingUser, ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY, API_KEY_OR_ACCOUNT_ACCESS } from '../../shared/auth/route-callers.js';
import {
  attachPlan,
  createAgent,
  detachPlan,
  getAgent,
  listAgentPlans,
  listOwnAgents,
  setAgentListed,
  updateAgent,
} from '../../shared/registry/agents.js';
import { createAgentWithPlan } from '../../shared/registry/agent-with-plan.js';
import { requirePlanId } from '../../shared/registry/plans.js';
import { Activate, AgentInput, AgentUpdate, AgentWithPlanInput } from '../../shared/registry/requests.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery, SortedPageQuery } from '../http/pagination.js';
import { type AdminRoute, type AdminRouterContext, del, get, post, put } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

export function agentsRoutes({ ctx: svc }: AdminDeps): AdminRoute[] {
  const create = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await createAgent(svc, caller.userId, parse(AgentInput, ctx.request.body));
  };
  const list = async (ctx: Ctx, caller: ActingUser) => {
    const page = parse(SortedPageQuery, ctx.query, 'query');
    const { items, ...rest } = await listOwnAgents(svc, caller.userId, page);
    ctx.body = { ...rest, agents: items };
  };
  const createWithPlan = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await createAgentWithPlan(svc, caller.userId, parse(AgentWithPlanInput, ctx.request.body));
  };
  const read = async (ctx: Ctx, caller: ActingUser) => {
    ctx.body = await getAgent(svc, caller.userId, ctx.params.agentId ?? '');
  };
  const update = async (ctx: Ctx, caller: ApiKeyCaller) => {
    await updateAgent(svc, caller.userId, ctx.params.agentId ?? '', parse(AgentUpdate, ctx.request.body));
    ctx.body = { success: true };
  };
  const setListed = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const listed = parse(Activate, ctx.params.activate, 'path.activate');
    await setAgentListed(svc, caller.userId, ctx.params.agentId ?? '', listed);
    ctx.body = { success: true };
  };
  const attach = async (ctx: Ctx, caller: ApiKeyCaller) => {
    await attachPlan(svc, caller.userId, ctx.params.agentId ?? '', requirePlanId(ctx.params.planId));
    ctx.body = { success: true };
  };
  const detach = async (ctx: Ctx, caller: ApiKeyCaller) => {
    await detachPlan(svc, caller.userId, ctx.params.agentId ?? '', requirePlanId(ctx.params.planId));
    ctx.body = { success: true };
  };
  const plans = async (ctx: Ctx, caller: ActingUser) => {
    const page = parse(PageQuery, ctx.query, 'query');
    const { items, ...rest } = await listAgentPlans(svc, caller.userId, ctx.params.agentId ?? '', page);
    ctx.body = { ...rest, plans: items };
  };

  return [
    post('/protocol/agents', API_KEY, create),
    get('/protocol/agents', API_KEY_OR_ACCOUNT_ACCESS, list),
    post('/protocol/agents/plans', API_KEY, createWithPlan),
    get('/protocol/agents/:agentId', API_KEY_OR_ACCOUNT_ACCESS, read),
    put('/protocol/agents/:agentId', API_KEY, update),
    put('/protocol/agents/:agentId/list/:activate', API_KEY, setListed),
    post('/protocol/agents/:agentId/plan/:planId', API_KEY, attach),
    del('/protocol/agents/:agentId/plan/:planId', API_KEY, detach),
    get('/protocol/agents/:agentId/plans', API_KEY_OR_ACCOUNT_ACCESS, plans),
  ];
}
