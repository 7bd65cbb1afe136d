// The proxy's route table as data (shared/router/routes.ts): the table the proxy builds serves exactly the declared
// routes, in order, with the same access declarations, so the API description (which lists the declarations) lists
// the proxy's routes; and a table that differs from the declarations is refused while it is built.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { getAddress } from 'viem';
import { listProxyRoutes } from '../../admin/openapi/route-listing.js';
import { loadConfig } from '../../config/index.js';
import { RouteTable } from '../../proxy/http/route-table.js';
import { buildRouterRoutes, servingAsDeclared } from '../../proxy/routes/index.js';
import { type ServiceContext, createContext } from '../../shared/context.js';
import { InvariantError } from '../../shared/errors/invariant.js';
import { createLifecycle } from '../../shared/lifecycle.js';
import { createLogger } from '../../shared/log.js';
import { createDigestSigner } from '../../shared/protocols/digest-signer.js';
import { createRequestClaimStore } from '../../shared/router/request-claim-store.js';
import { createConcurrencyLimiter } from '../../shared/router/concurrency.js';
import { createDelegationSnapshots } from '../../shared/router/delegation-snapshot.js';
import { PROXY_ROUTES, PROXY_ROUTE_LIST } from '../../shared/router/routes.js';
import { createWalletKeyCache } from '../../shared/router/wallet-keys.js';
import { createSettlement } from '../../shared/settlement/backend.js';
import { createUpstream } from '../../shared/upstream/index.js';

let dir: string;
let ctx: ServiceContext;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'payroute-routes-'));
  const config = loadConfig({ DATA_DIR: dir, SECRETS_KEY: randomBytes(32).toString('hex') });
  ctx = await createContext(config, createLogger({ LOG_LEVEL: 'silent' }, 'routes'), { migrate: true });
});

test.after.always(async () => {
  await ctx?.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the table the proxy builds serves the declared routes, in order, with their access declarations', async (t) => {
  const upstream = createUpstream({ allowPrivate: false });
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
    const built = table.routes().map((r) => ({ method: r.method, path: r.path, access: r.access }));
    const declared = PROXY_ROUTE_LIST.map((r) => ({ method: r.method, path: r.path, access: r.access }));
    t.deepEqual(built, declared);
    t.true(table.routes().every((r, i) => r.access === PROXY_ROUTE_LIST[i]?.access));
    const listed = listProxyRoutes().map((r) => ({ method: r.method, path: r.path, access: r.access }));
    t.deepEqual(listed, built);
  } finally {
    await upstream.close();
    await signer.close();
  }
});

test('a declaration without a handler, a handler without a declaration, or one served twice is refused', (t) => {
  const handler = async () => {};
  const missing = new RouteTable().add(PROXY_ROUTES.health, handler);
  t.throws(() => servingAsDeclared(missing, [PROXY_ROUTES.health, PROXY_ROUTES.ready]), {
    instanceOf: InvariantError,
  });
  const undeclared = new RouteTable()
    .add(PROXY_ROUTES.health, handler)
    .add({ method: 'GET', path: '/extra', access: PROXY_ROUTES.health.access }, handler);
  t.throws(() => servingAsDeclared(undeclared, [PROXY_ROUTES.health]), { instanceOf: InvariantError });
  const twice = new RouteTable().add(PROXY_ROUTES.health, handler).add(PROXY_ROUTES.health, handler);
  t.throws(() => servingAsDeclared(twice, [PROXY_ROUTES.health]), { instanceOf: InvariantError });
  const exact = new RouteTable().add(PROXY_ROUTES.health, handler).add(PROXY_ROUTES.ready, handler);
  t.notThrows(() => servingAsDeclared(exact, [PROXY_ROUTES.health, PROXY_ROUTES.ready]));
});
