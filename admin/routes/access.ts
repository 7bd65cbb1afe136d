// Access endpoints (interface "Access", "Agents" initialize): parse -> call shared/credits -> map.
import type { Router } from '@koa/router';
import { accessToken, initializeAgentRequest } from '../../shared/credits/access.js';
import { AgentIdParam, InitializeBody } from '../../shared/credits/wire.js';
import type { AdminDeps } from '../deps.js';
import { type AdminState, principalOf } from '../http/state.js';
import { parse } from '../http/validate.js';

export function accessRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const svc = deps.ctx;

  router.get('/protocol/token/:planId/:agentId', async (ctx) => {
    const agentId = parse(AgentIdParam, ctx.params.agentId, 'path.agentId');
    ctx.body = await accessToken(svc, deps.signer, principalOf(ctx), ctx.params.planId ?? '', agentId);
  });

  router.post('/protocol/agents/initialize/:agentId', async (ctx) => {
    const agentId = parse(AgentIdParam, ctx.params.agentId, 'path.agentId');
    const input = parse(InitializeBody, ctx.request.body);
    ctx.body = await initializeAgentRequest(svc, deps.signer, principalOf(ctx), agentId, input);
  });
}
