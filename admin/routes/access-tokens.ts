// Access endpoints: parse -> call shared/credits -> map.
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY } from '../../shared/auth/route-callers.js';
import { accessToken, initializeAgentRequest } from '../../shared/credits/access-tokens.js';
import { AgentIdParam, InitializeBody } from '../../shared/credits/requests.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, get, post } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

export function accessRoutes({ ctx: svc, signer }: AdminDeps): AdminRoute[] {
  const token = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const agentId = parse(AgentIdParam, ctx.params.agentId, 'path.agentId');
    ctx.body = await accessToken(svc, signer, caller, ctx.params.planId ?? '', agentId);
  };
  const initialize = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const agentId = parse(AgentIdParam, ctx.params.agentId, 'path.agentId');
    ctx.body = await initializeAgentRequest(svc, signer, caller, agentId, parse(InitializeBody, ctx.request.body));
  };

  return [
    get('/protocol/token/:planId/:agentId', API_KEY, token),
    post('/protocol/agents/initialize/:agentId', API_KEY, initialize),
  ];
}
