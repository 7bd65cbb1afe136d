import type { Router } from '@koa/router';
import { z } from 'zod';
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
import { principalOf, type AdminState } from '../http/state.js';
import { parse } from '../http/validate.js';

const DelegationParams = z.object({ id: z.uuid() });

export function delegationsRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const { ctx: svc, signer } = deps;

  router.post('/delegation/create', async (ctx) => {
    const body = parse(CreateDelegationBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = await createDelegation(svc, signer, principalOf(ctx), body);
  });

  router.get('/delegation', async (ctx) => {
    const q = parse(ListDelegationsQuery, ctx.query, 'query');
    ctx.body = await listDelegations(svc, principalOf(ctx), q);
  });

  // A malformed id cannot name a delegation of the caller: 404 like any other unknown id.
  const idOf = (params: unknown): string => {
    const r = DelegationParams.safeParse(params);
    return r.success ? r.data.id : '00000000-0000-0000-0000-000000000000';
  };

  router.get('/delegation/:id', async (ctx) => {
    ctx.body = await getDelegation(svc, principalOf(ctx).userId, idOf(ctx.params));
  });

  router.delete('/delegation/:id', async (ctx) => {
    ctx.body = await revokeDelegation(svc, principalOf(ctx).userId, idOf(ctx.params));
  });

  router.get('/delegation/:id/transactions', async (ctx) => {
    const q = parse(PageQuery, ctx.query, 'query');
    ctx.body = await listDelegationTransactions(svc, principalOf(ctx).userId, idOf(ctx.params), q);
  });
}
