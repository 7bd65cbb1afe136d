// OAuth endpoints at {host_url} (no /api/v1), for the pages and connectors of the consent flow: parse -> call
// shared/oauth -> map. These speak the BCK.* error envelope; the RFC 6749 endpoints (token, device authorization,
// revocation) have their own error format and are declared apart.
import { z } from 'zod';
import { HUMAN_API_KEY } from '../../shared/auth/route-access.js';
import { connectDetails } from '../../shared/oauth/clients.js';
import { line } from '../../shared/text.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, post } from '../http/route.js';
import { parse } from '../http/validate.js';

const ConnectDetailsBody = z.object({ client_id: line(200).min(1) });

export function oauthRoutes({ ctx }: AdminDeps): AdminRoute[] {
  return [
    // What the consent page shows of a connector before the human decides (its name, what it may ask for).
    post('/oauth/connect/details', HUMAN_API_KEY, async (c) => {
      const body = parse(ConnectDetailsBody, c.request.body);
      c.body = await connectDetails(ctx, body.client_id);
    }),
  ];
}
