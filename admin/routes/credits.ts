// Credit endpoints (interface "Credits", "Plans" order/balance, "Agents" sub-tasks): parse -> call
// shared/credits -> map. Auth is enforced by middleware; the caller is the API key's principal.
import type { Router } from '@koa/router';
import { getBalance } from '../../shared/credits/balance.js';
import { recordSubTask, redeem } from '../../shared/credits/burn.js';
import { mintCredits } from '../../shared/credits/mint.js';
import { orderPlan } from '../../shared/credits/order.js';
import { HolderParam, MintBody, MintExpirableBody, RedeemBody, SubTaskBody } from '../../shared/credits/wire.js';
import type { AdminDeps } from '../deps.js';
import { type AdminState, principalOf } from '../http/state.js';
import { parse } from '../http/validate.js';

export function creditsRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const svc = deps.ctx;

  router.post('/protocol/plans/mint', async (ctx) => {
    const input = parse(MintBody, ctx.request.body);
    ctx.body = await mintCredits(svc, principalOf(ctx), input);
  });

  router.post('/protocol/plans/mintExpirable', async (ctx) => {
    const input = parse(MintExpirableBody, ctx.request.body);
    ctx.body = await mintCredits(svc, principalOf(ctx), input);
  });

  router.post('/protocol/plans/redeem', async (ctx) => {
    const input = parse(RedeemBody, ctx.request.body);
    ctx.body = await redeem(svc, deps.signer, principalOf(ctx), input);
  });

  router.post('/protocol/plans/:planId/order', async (ctx) => {
    ctx.body = await orderPlan(svc, principalOf(ctx), ctx.params.planId ?? '');
  });

  router.get('/protocol/plans/:planId/balance/:holderAddress', async (ctx) => {
    const { holderAddress } = parse(HolderParam, { holderAddress: ctx.params.holderAddress }, 'path');
    ctx.body = await getBalance(svc, ctx.params.planId ?? '', holderAddress);
  });

  router.post('/protocol/agent-sub-tasks', async (ctx) => {
    const input = parse(SubTaskBody, ctx.request.body);
    ctx.body = await recordSubTask(svc, principalOf(ctx), input);
  });
}
