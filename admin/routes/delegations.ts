// Spending delegations: parse -> call shared/delegations -> map.
import { z } from 'zod';
import { type ApiKeyCaller, type Caller, isOAuthCaller } from '../../shared/auth/caller.js';
import { API_KEY, accepts } from '../../shared/auth/route-callers.js';
import {
  createDelegation,
  getDelegation,
  getGrantDelegation,
  listDelegationTransactions,
  listDelegations,
  revokeDelegation,
} from '../../shared/delegations/delegations.js';
import { CreateDelegationBody, ListDelegationsQuery } from '../../shared/delegations/requests.js';
import { AppError } from '../../shared/errors/app-error.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery } from '../http/pagination.js';
import { type AdminRoute, type AdminRouterContext, del, get, idempotent, post } from '../http/route.js';
import { parse } from '../http/validate.js';
import { shownValue } from '../http/shown-value.js';

type Ctx = AdminRouterContext;

export const DelegationId = z.uuid();

/** A malformed id names no delegation of the caller: the 404 of an unknown id, naming the id as it was sent. */
function delegationIdOf(ctx: Ctx): string {
  const raw = ctx.params.id ?? '';
  const r = DelegationId.safeParse(raw);
  if (r.success) return r.data;
  const shown = shownValue(raw);
  throw new AppError('BCK.DELEGATION.0001', {
    details: `delegation ${shown} not found`,
    params: { delegationId: shown },
  });
}

export function delegationsRoutes({ ctx: svc, signer }: AdminDeps): AdminRoute[] {
  const create = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const body = parse(CreateDelegationBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = await createDelegation(svc, signer, caller, body);
  };
  const list = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await listDelegations(svc, caller, parse(ListDelegationsQuery, ctx.query, 'query'));
  };
  const read = async (ctx: Ctx, caller: Caller) => {
    const id = delegationIdOf(ctx);
    // A connector sees its grant's delegation (its cap and spending), none of the user's others.
    ctx.body = isOAuthCaller(caller)
      ? await getGrantDelegation(svc, caller, id)
      : await getDelegation(svc, caller.userId, id);
  };
  const revoke = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await revokeDelegation(svc, caller.userId, delegationIdOf(ctx));
  };
  const transactions = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const id = delegationIdOf(ctx);
    const q = parse(PageQuery, ctx.query, 'query');
    ctx.body = await listDelegationTransactions(svc, caller.userId, id, q);
  };

  return [
    idempotent(post('/delegation/create', API_KEY, create)),
    get('/delegation', API_KEY, list),
    get('/delegation/:id', accepts('apiKey', 'commerce', 'account_access'), read),
    del('/delegation/:id', API_KEY, revoke),
    get('/delegation/:id/transactions', API_KEY, transactions),
  ];
}
