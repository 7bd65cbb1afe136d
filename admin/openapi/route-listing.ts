// The route tables of both processes as the API description lists them. The admin process's are its own
// declarations; the proxy's table is built here as the proxy builds it, with services that are never called (the
// routes only close over them), and released at once: the document lists the table's routes, not a copy.
import { createLifecycle } from '../../shared/lifecycle.js';
import { getAddress } from 'viem';
import { buildRouterRoutes } from '../../proxy/routes/index.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ListedRoute } from '../../shared/openapi/listed-route.js';
import { createDigestSigner } from '../../shared/protocols/digest-signer.js';
import { createRequestClaimStore } from '../../shared/router/request-claim-store.js';
import { createConcurrencyLimiter } from '../../shared/router/concurrency.js';
import { createDelegationSnapshots } from '../../shared/router/delegation-snapshot.js';
import { createWalletKeyCache } from '../../shared/router/wallet-keys.js';
import { createSettlement } from '../../shared/settlement/backend.js';
import { createUpstream } from '../../shared/upstream/index.js';
import { OAUTH_PROTOCOL } from '../http/oauth-protocol.js';
import type { AdminRoute } from '../http/route.js';
import { PAGE_PROTOCOL } from '../pages/browser.js';

export function listAdminRoutes(routes: readonly AdminRoute[]): ListedRoute[] {
  return routes.map((r) => ({
    process: 'admin',
    method: r.method,
    path: r.path,
    access: r.access,
    idempotent: r.idempotent,
    errors: r.protocol === OAUTH_PROTOCOL ? 'oauth' : r.protocol === PAGE_PROTOCOL ? 'page' : 'envelope',
    bodies: r.protocol?.body ?? 'json',
  }));
}

export async function listProxyRoutes(ctx: ServiceContext): Promise<ListedRoute[]> {
  const upstream = createUpstream({ allowPrivate: false });
  // No threads: nothing is signed.
  const signer = createDigestSigner(0);
  try {
    const table = buildRouterRoutes(
      {
        ctx,
        requestClaims: createRequestClaimStore(),
        limiter: createConcurrencyLimiter(1),
        waiting: createConcurrencyLimiter(1),
        upstream,
        feeRecipient: getAddress(`0x${'00'.repeat(20)}`),
        walletKeys: createWalletKeyCache(ctx),
        delegations: createDelegationSnapshots(ctx),
        signer,
        settlement: createSettlement(ctx),
      },
      createLifecycle(),
    );
    return table.routes().map((r) => ({
      process: 'proxy',
      method: r.method,
      path: r.path,
      access: r.access,
      idempotent: false,
      errors: 'envelope',
      bodies: 'json',
    }));
  } finally {
    await upstream.close();
    await signer.close();
  }
}
