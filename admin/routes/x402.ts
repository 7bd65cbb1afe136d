// x402 delegated permissions: parse -> call shared/x402 -> map. Verify and settle
// answer 201 with the facilitator result for anything well-formed; a body that is not even the right shape is a
// 400, and settle's money refusals are envelopes (402 BCK.CREDITS.0003, 403 BCK.PROTOCOL.0062). An account_access
// connector may create permissions within its consent only: svc:card-delegation on its grant's delegation.
import type { AccountAccessCaller, ApiKeyCaller } from '../../shared/auth/caller.js';
import { API_KEY, API_KEY_OR_ACCOUNT_ACCESS } from '../../shared/auth/route-callers.js';
import {
  assertGrantMayCreate,
  createPermission,
  getPermission,
  listPermissions,
  revokePermission,
} from '../../shared/x402/permissions.js';
import { settlePermission } from '../../shared/x402/settle.js';
import { verifyPermission } from '../../shared/x402/verify.js';
import { CreatePermissionBody, ListPermissionsQuery, SettleBody, VerifyBody } from '../../shared/x402/requests.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, type AdminRouterContext, del, get, idempotent, post } from '../http/route.js';
import { parse } from '../http/validate.js';

type Ctx = AdminRouterContext;

export function x402Routes({ ctx: svc }: AdminDeps): AdminRoute[] {
  const create = async (ctx: Ctx, caller: ApiKeyCaller | AccountAccessCaller) => {
    const body = parse(CreatePermissionBody, ctx.request.body);
    if (caller.kind === 'account_access') assertGrantMayCreate(caller, body);
    const created = await createPermission(svc, caller, body);
    ctx.status = 201;
    ctx.body = created;
  };
  const list = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await listPermissions(svc, caller.userId, parse(ListPermissionsQuery, ctx.query, 'query'));
  };
  const read = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await getPermission(svc, caller.userId, ctx.params.permissionHash ?? '');
  };
  const revoke = async (ctx: Ctx, caller: ApiKeyCaller) => {
    ctx.body = await revokePermission(svc, caller.userId, ctx.params.permissionHash ?? '');
  };
  const verify = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const result = await verifyPermission(svc, caller, parse(VerifyBody, ctx.request.body));
    ctx.status = 201;
    ctx.body = result;
  };
  const settle = async (ctx: Ctx, caller: ApiKeyCaller) => {
    const result = await settlePermission(svc, caller, parse(SettleBody, ctx.request.body));
    ctx.status = 201;
    ctx.body = result;
  };

  return [
    idempotent(post('/x402/permissions', API_KEY_OR_ACCOUNT_ACCESS, create)),
    get('/x402/permissions', API_KEY, list),
    get('/x402/permissions/:permissionHash', API_KEY, read),
    del('/x402/permissions/:permissionHash', API_KEY, revoke),
    post('/x402/verify', API_KEY, verify),
    post('/x402/settle', API_KEY, settle),
  ];
}
