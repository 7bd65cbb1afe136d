// Organization endpoints (budgets): authorize -> parse -> call shared/organizations -> map. Admins create and
// change a group's budgets; Admins and the group's members read them (shared/organizations/budgets.ts). The
// caller's standing is resolved before the body is parsed, so an outsider gets the 404 and a Member the 403
// whatever they send.
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY } from '../../shared/auth/route-callers.js';
import { adminOf, memberOf } from '../../shared/organizations/org-caller.js';
import { createBudget, getBudget, listBudgets, updateBudget } from '../../shared/organizations/budgets.js';
import { CreateBudgetBody, UpdateBudgetBody } from '../../shared/organizations/requests.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, get, patch, post } from '../http/route.js';
import { shownValue } from '../http/shown-value.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

const BUDGETS = '/organizations/:orgId/groups/:groupId/budgets';

const orgIdOf = (ctx: Ctx): string => ctx.params.orgId ?? '';
const groupIdOf = (ctx: Ctx): string => ctx.params.groupId ?? '';
/** Repeated in a 404's details: shown printable and bounded (a malformed id names no budget: 404, not a 400). */
const budgetIdOf = (ctx: Ctx): string => shownValue(ctx.params.budgetId ?? '');

export function orgBudgetsRoutes({ ctx: svc }: AdminDeps): AdminRoute[] {
  const create = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const org = await adminOf(svc, caller.userId, orgIdOf(ctx));
    const body = parse(CreateBudgetBody, ctx.request.body);
    const budget = await createBudget(svc, org, groupIdOf(ctx), body);
    ctx.status = 201;
    ctx.body = { success: true, budget };
  };
  const list = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const org = await memberOf(svc, caller.userId, orgIdOf(ctx));
    ctx.body = { success: true, budgets: await listBudgets(svc, org, groupIdOf(ctx)) };
  };
  const read = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const org = await memberOf(svc, caller.userId, orgIdOf(ctx));
    ctx.body = { success: true, budget: await getBudget(svc, org, groupIdOf(ctx), budgetIdOf(ctx)) };
  };
  const update = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const org = await adminOf(svc, caller.userId, orgIdOf(ctx));
    const body = parse(UpdateBudgetBody, ctx.request.body);
    ctx.body = { success: true, budget: await updateBudget(svc, org, groupIdOf(ctx), budgetIdOf(ctx), body) };
  };

  return [
    post(BUDGETS, API_KEY, create),
    get(BUDGETS, API_KEY, list),
    get(`${BUDGETS}/:budgetId`, API_KEY, read),
    patch(`${BUDGETS}/:budgetId`, API_KEY, update),
  ];
}
