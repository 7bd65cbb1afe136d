import { PUBLIC } from '../../shared/auth/route-access.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, get } from '../http/route.js';

/** Discovery, open to anyone: the service's public signing keys, which verify the tokens it issues. */
export function wellKnownRoutes({ signer }: AdminDeps): AdminRoute[] {
  return [
    get('/.well-known/jwks.json', PUBLIC, async (ctx) => {
      ctx.set('cache-control', 'public, max-age=60');
      ctx.body = await signer.jwks();
    }),
  ];
}
