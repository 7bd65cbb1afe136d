// x402 delegated permissions (interface "x402 permissions", DESIGN §6): parse -> call shared/x402 -> map.
// Verify and settle answer 201 with the facilitator result for anything well-formed; a body that is not even
// the right shape is a 400, and settle's money refusals are envelopes (402 BCK.CREDITS.0003, 403 BCK.PROTOCOL.0062).
import type { Router } from '@koa/router';
import { createPermission, getPermission, listPermissions, revokePermission } from '../../shared/x402/permissions.js';
import { settlePermission } from '../../shared/x402/settle.js';
import { verifyPermission } from '../../shared/x402/verify.js';
import { CreatePermissionBody, ListPermissionsQuery, SettleBody, VerifyBody } from '../../shared/x402/wire.js';
import type { AdminDeps } from '../deps.js';
import { type AdminState, principalOf } from '../http/state.js';
import { parse } from '../http/validate.js';

export function x402Routes(router: Router<AdminState>, deps: AdminDeps): void {
  const svc = deps.ctx;

  router.post('/x402/permissions', async (ctx) => {
    const body = parse(CreatePermissionBody, ctx.request.body);
    const created = await createPermission(svc, principalOf(ctx), body);
    ctx.status = 201;
    ctx.body = created;
  });

  router.get('/x402/permissions', async (ctx) => {
    const q = parse(ListPermissionsQuery, ctx.query, 'query');
    ctx.body = await listPermissions(svc, principalOf(ctx).userId, q);
  });

  router.get('/x402/permissions/:permissionHash', async (ctx) => {
    ctx.body = await getPermission(svc, principalOf(ctx).userId, ctx.params.permissionHash ?? '');
  });

  router.delete('/x402/permissions/:permissionHash', async (ctx) => {
    ctx.body = await revokePermission(svc, principalOf(ctx).userId, ctx.params.permissionHash ?? '');
  });

  router.post('/x402/verify', async (ctx) => {
    const body = parse(VerifyBody, ctx.request.body);
    const result = await verifyPermission(svc, principalOf(ctx), body);
    ctx.status = 201;
    ctx.body = result;
  });

  router.post('/x402/settle', async (ctx) => {
    const body = parse(SettleBody, ctx.request.body);
    const result = await settlePermission(svc, principalOf(ctx), body);
    ctx.status = 201;
    ctx.body = result;
  });
}
