import type { Router } from '@koa/router';
import type { AdminDeps } from '../deps.js';
import type { AdminState } from '../http/state.js';

/** {host_url}/.well-known/jwks.json: the service's public signing keys (DESIGN §3). */
export function wellKnownRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  router.get('/.well-known/jwks.json', async (ctx) => {
    ctx.set('cache-control', 'public, max-age=60');
    ctx.body = await deps.signer.jwks();
  });
}
