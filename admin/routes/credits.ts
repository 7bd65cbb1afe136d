// Credit endpoints: parse -> call shared/credits
// -> map.
import type { AccountAccessCaller, ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY, API_KEY_OR_ACCOUNT_ACCESS } from '../../shared/auth/route-callers.js';
import { getBalance } from '../../shared/credits/balance.js';
import { recordSubTask, redeem } from '../../shared/credits/burn.js';
import { orderPlanByCard } from '../../shared/credits/card-order.js';
import { mintCredits } from '../../shared/credits/mint.js';
import { orderPlan } from '../../shared/credits/order.js';
import { HolderParam, MintBody, MintExpirableBody, RedeemBody, SubTaskBody } from '../../shared/credits/requests.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, get, idempotent, post } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

export function creditsRoutes({ ctx: svc, signer }: AdminDeps): AdminRoute[] {
  const mint = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await mintCredits(svc, caller, parse(MintBody, ctx.request.body));
  };
  const mintExpirable = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await mintCredits(svc, caller, parse(MintExpirableBody, ctx.request.body));
  };
  const redeemCredits = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await redeem(svc, signer, caller, parse(RedeemBody, ctx.request.body));
  };
  const order = async (ctx: Ctx, caller: ApiKeyCaller | AccountAccessCaller) => {
    const planId = ctx.params.planId ?? '';
    // A connector acts within its grant's card mandate: its order is paid by card, never from the user's wallet.
    ctx.body =
      caller.kind === 'account_access'
        ? await orderPlanByCard(svc, caller, planId)
        : await orderPlan(svc, caller, planId);
  };
  // Any caller may read any holder's balance of a plan (the interface's balance read); a credential is still required.
  const balance = async (ctx: Ctx) => {
    const { holderAddress } = parse(HolderParam, { holderAddress: ctx.params.holderAddress }, 'path');
    ctx.body = await getBalance(svc, ctx.params.planId ?? '', holderAddress);
  };
  const subTask = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await recordSubTask(svc, caller, parse(SubTaskBody, ctx.request.body));
  };

  return [
    idempotent(post('/protocol/plans/mint', API_KEY, mint)),
    idempotent(post('/protocol/plans/mintExpirable', API_KEY, mintExpirable)),
    idempotent(post('/protocol/plans/redeem', API_KEY, redeemCredits)),
    idempotent(post('/protocol/plans/:planId/order', API_KEY_OR_ACCOUNT_ACCESS, order)),
    get('/protocol/plans/:planId/balance/:holderAddress', API_KEY_OR_ACCOUNT_ACCESS, balance),
    idempotent(post('/protocol/agent-sub-tasks', API_KEY, subTask)),
  ];
}
