// Agent registry endpoints (interface "Agents"): parse -> call shared/registry -> map.
import type { Router } from '@koa/router';
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
import { Activate, AgentInput, AgentUpdate, AgentWithPlanInput } from '../../shared/registry/schemas.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery, SortedPageQuery } from '../http/pagination.js';
import { type AdminState, principalOf } from '../http/state.js';
import { parse } from '../http/validate.js';

export function agentsRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const svc = deps.ctx;

  router.post('/protocol/agents', async (ctx) => {
    const input = parse(AgentInput, ctx.request.body);
    ctx.body = await createAgent(svc, principalOf(ctx).userId, input);
  });

  router.get('/protocol/agents', async (ctx) => {
    const page = parse(SortedPageQuery, ctx.query, 'query');
    const { items, ...rest } = await listOwnAgents(svc, principalOf(ctx).userId, page);
    ctx.body = { ...rest, agents: items };
  });

  // Registered before `/protocol/agents/:agentId...` for readability; the methods differ anyway.
  router.post('/protocol/agents/plans', async (ctx) => {
    const input = parse(AgentWithPlanInput, ctx.request.body);
    ctx.body = await createAgentWithPlan(svc, principalOf(ctx).userId, input);
  });

  router.get('/protocol/agents/:agentId', async (ctx) => {
    ctx.body = await getAgent(svc, principalOf(ctx).userId, ctx.params.agentId ?? '');
  });

  router.put('/protocol/agents/:agentId', async (ctx) => {
    const update = parse(AgentUpdate, ctx.request.body);
    await updateAgent(svc, principalOf(ctx).userId, ctx.params.agentId ?? '', update);
    ctx.body = { success: true };
  });

  router.put('/protocol/agents/:agentId/list/:activate', async (ctx) => {
    const listed = parse(Activate, ctx.params.activate, 'path.activate');
    await setAgentListed(svc, principalOf(ctx).userId, ctx.params.agentId ?? '', listed);
    ctx.body = { success: true };
  });

  router.post('/protocol/agents/:agentId/plan/:planId', async (ctx) => {
    const planId = requirePlanId(ctx.params.planId);
    await attachPlan(svc, principalOf(ctx).userId, ctx.params.agentId ?? '', planId);
    ctx.body = { success: true };
  });

  router.delete('/protocol/agents/:agentId/plan/:planId', async (ctx) => {
    const planId = requirePlanId(ctx.params.planId);
    await detachPlan(svc, principalOf(ctx).userId, ctx.params.agentId ?? '', planId);
    ctx.body = { success: true };
  });

  router.get('/protocol/agents/:agentId/plans', async (ctx) => {
    const page = parse(PageQuery, ctx.query, 'query');
    const { items, ...rest } = await listAgentPlans(svc, principalOf(ctx).userId, ctx.params.agentId ?? '', page);
    ctx.body = { ...rest, plans: items };
  });
}
