// The streaming variant of mode B (ALL /api/v1/router/proxy, aliases /api/v1/proxy and /proxy): parse the control
// headers, take the user's slot, hand the call to the service (shared/router/flows/stream.ts) with the caller's side of
// the connection as its CallerChannel.
import type { ApiKeyCaller } from '../../shared/auth/caller.js';
import { routerSlot } from '../../shared/router/flows/route.js';
import { ProxyHeaders } from '../../shared/router/requests.js';
import { PROXY_ROUTES } from '../../shared/router/routes.js';
import type { RouterServices } from '../../shared/router/services.js';
import { proxyStream } from '../../shared/router/flows/stream.js';
import { NodeCallerChannel } from '../http/caller-channel.js';
import { parseOr400 } from '../../shared/router/parse.js';
import type { RouteTable, RouterRequest } from '../http/route-table.js';

export function streamRoutes(table: RouteTable, services: RouterServices): void {
  const bodyLimits = {
    maxBytes: services.ctx.config.ROUTER_MAX_REQUEST_BYTES,
    timeoutMs: services.ctx.config.ROUTER_REQUEST_BODY_TIMEOUT_MS,
  };
  const handler = async ({ req, res, caller, facts }: RouterRequest<ApiKeyCaller>) => {
    const control = parseOr400(ProxyHeaders, req.headers, 'headers');
    // The user's slot before the body is read: a user's parallel uploads wait their turn or get 429, unread.
    const release = routerSlot(services, caller);
    try {
      await proxyStream(
        services,
        caller,
        { control, method: req.method ?? 'GET', headers: req.headers },
        new NodeCallerChannel(req, res, facts, bodyLimits),
        release,
      );
    } finally {
      release();
    }
  };
  for (const declared of [PROXY_ROUTES.proxy, PROXY_ROUTES.proxyAlias, PROXY_ROUTES.proxyShort])
    table.add(declared, handler);
}
