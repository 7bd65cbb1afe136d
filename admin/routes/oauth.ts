// OAuth endpoints at {host_url} (no /api/v1): parse -> call shared/oauth -> map.
//   - The consent flow's JSON endpoints, for the signed-in human (their API key; 401 BCK.OAUTH.0007 without one),
//     speak the BCK error envelope: connect details, authorize, device details and decision, bindings.
//   - The connector's endpoints speak RFC 6749 / 8628 / 7009 / 7591 (admin/http/oauth-protocol.ts): token, device
//     authorization, revocation, dynamic registration. They are public: a public client has no secret; PKCE and
//     the codes prove it.
import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error.js';
import { HUMAN_API_KEY, PUBLIC } from '../../shared/auth/route-callers.js';
import { listBindings, revokeBinding } from '../../shared/oauth/bindings.js';
import { connectDetails } from '../../shared/oauth/clients.js';
import {
  DeviceDecisionBody,
  DeviceDetailsBody,
  decideDevice,
  deviceDetails,
} from '../../shared/oauth/device-decision.js';
import { startDeviceAuthorization } from '../../shared/oauth/device-authorization.js';
import { authorize } from '../../shared/oauth/authorize.js';
import { registerClient } from '../../shared/oauth/registration.js';
import { revokeToken } from '../../shared/oauth/revocation.js';
import { tokenRequest } from '../../shared/oauth/token-endpoint.js';
import { line } from '../../shared/text.js';
import type { AdminDeps } from '../deps.js';
import { requestAddress } from '../http/client-address.js';
import { OAUTH_PROTOCOL, REGISTRATION_PROTOCOL, noStore } from '../http/oauth-protocol.js';
import { PageQuery } from '../http/pagination.js';
import { type AdminRoute, get, post, speaking } from '../http/route.js';
import { parse } from '../http/validate.js';

export const ConnectDetailsBody = z.object({ client_id: line(200).min(1) });
export const BindingParams = z.object({ bindingId: z.uuid() });

export function oauthRoutes({ ctx, signer }: AdminDeps): AdminRoute[] {
  return [
    // What the consent page shows of a connector before the human decides (its name, what it may ask for).
    post('/oauth/connect/details', HUMAN_API_KEY, async (c) => {
      const body = parse(ConnectDetailsBody, c.request.body);
      c.body = await connectDetails(ctx, body.client_id);
    }),
    // The human's decision on an authorization request: 201 with the code, or 200 with the denial's redirect.
    post('/oauth/authorize', HUMAN_API_KEY, async (c, caller) => {
      const r = await authorize(ctx, caller, c.request.body);
      noStore(c);
      c.status = r.approved ? 201 : 200;
      c.body = r.approved ? { code: r.code, redirectTo: r.redirectTo } : { redirectTo: r.redirectTo };
    }),
    post('/oauth/device/details', HUMAN_API_KEY, async (c, caller) => {
      const body = parse(DeviceDetailsBody, c.request.body);
      c.body = await deviceDetails(ctx, caller.userId, body.user_code);
    }),
    post('/oauth/device', HUMAN_API_KEY, async (c, caller) => {
      await decideDevice(ctx, caller.userId, parse(DeviceDecisionBody, c.request.body));
      c.status = 204;
    }),
    get('/oauth/bindings', HUMAN_API_KEY, async (c, caller) => {
      c.body = await listBindings(ctx, caller.userId, parse(PageQuery, c.query, 'query'));
    }),
    post('/oauth/bindings/:bindingId/revoke', HUMAN_API_KEY, async (c, caller) => {
      const { bindingId } = parse(BindingParams, c.params, 'path');
      await revokeBinding(ctx, caller.userId, bindingId);
      c.status = 204;
    }),

    speaking(
      OAUTH_PROTOCOL,
      post('/oauth/token', PUBLIC, async (c) => {
        const tokens = await tokenRequest(ctx, signer, c.request.body);
        noStore(c);
        c.body = tokens;
      }),
    ),
    speaking(
      OAUTH_PROTOCOL,
      post('/oauth/device_authorization', PUBLIC, async (c) => {
        const started = await startDeviceAuthorization(ctx, c.request.body, requestAddress(c, ctx.box));
        noStore(c);
        c.body = started;
      }),
    ),
    speaking(
      OAUTH_PROTOCOL,
      post('/oauth/revoke', PUBLIC, async (c) => {
        await revokeToken(ctx, signer, c.request.body);
        noStore(c);
        c.status = 200;
        c.body = '';
      }),
    ),
    speaking(
      REGISTRATION_PROTOCOL,
      post('/oauth/register', PUBLIC, async (c) => {
        // Off (OAUTH_DYNAMIC_REGISTRATION=false, live's default): as if there were no such route.
        if (!ctx.config.oauthDynamicRegistration) {
          throw new AppError('BCK.HTTP.0404', { details: `no route for ${c.method} ${c.path}` });
        }
        const registered = await registerClient(ctx, c.request.body, requestAddress(c, ctx.box));
        noStore(c);
        c.status = 201;
        c.body = registered;
      }),
    ),
  ];
}
