// Spending delegations (interface "Delegations"): parse -> call shared/delegations -> map.
import { z } from 'zod';
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY } from '../../shared/auth/route-access.js';
import {
  createDelegation,
  getDelegation,
  listDelegationTransactions,
  listDelegations,
  revokeDelegation,
} from '../../shared/delegations/service.js';
import { CreateDelegationBody, ListDelegationsQuery } from '../../shared/delegations/schemas.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery } from '../http/pagination.js';
import { type AdminRoute, type AdminRouterContext, del, get, post } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

const DelegationId = z.uuid();

// A malformed id cannot name a delegation of the caller: 404 like any other unknown id.
function delegationIdOf(ctx: Ctx): string {
  const r = DelegationId.safeParse(ctx.params.id ?? '');
  return r.success ? r.data : '00000000-0000-0000-0000-000000000000';
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
  const read = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await getDelegation(svc, caller.userId, delegationIdOf(ctx));
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
    post('/delegation/create', API_KEY, create),
    get('/delegation', API_KEY, list),
    get('/delegation/:id', API_KEY, read),
    del('/delegation/:id', API_KEY, revoke),
    get('/delegation/:id/transactions', API_KEY, transactions),
  ];
}
