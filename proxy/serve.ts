// One proxy process (or one worker of several: proxy/cluster.ts): the payment router and the public front door.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import type { Config } from '../config/index.js';
import { getAddress } from 'viem';
import { createCredentialResolver } from '../shared/auth/credential-resolver.js';
import { ensureOperatorWallet } from '../shared/accounts/service-wallets.js';
import { createRequestClaimStore } from '../shared/router/request-claim-store.js';
import { createConcurrencyLimiter } from '../shared/router/concurrency.js';
import { createDelegationSnapshots } from '../shared/router/delegation-snapshot.js';
import { createWalletKeyCache } from '../shared/router/wallet-keys.js';
import { createDigestSigner } from '../shared/protocols/digest-signer.js';
import { createUpstream } from '../shared/upstream/index.js';
import { clientAddressOf, stampClientAddress } from '../shared/client-address.js';
import { createContextOrExit } from '../shared/context.js';
import { settlementOf } from '../shared/settlement/backend.js';
import { clientErrorHandler, connectionsCheckingIntervalMs } from '../shared/errors/client-error.js';
import type { Logger } from '../shared/log.js';
import { onShutdown } from '../shared/shutdown.js';
import { createLifecycle, drainServer, tracked } from '../shared/lifecycle.js';
import { startMetrics } from '../shared/metrics/listener.js';
import { WORKER_SLOT_ENV, reportServing } from './cluster.js';
import { buildProxyHandler } from './app.js';
import { createAdminForwarder } from './admin-forward.js';
import { buildRouterRoutes } from './routes/index.js';
import { createMcpEndpoint } from './mcp/endpoint.js';
import type { RouterServices } from '../shared/router/services.js';

/**
 * The longest a router call can last when every wait on its path ends at its bound: reading the body, the probe and
 * the paid hop (each a connection and a whole exchange), and the database statements between them (a call makes
 * fewer than ten, each bounded by the connection wait and the statement bound).
 */
function longestRouterCallMs(config: Config): number {
  const exchange = config.ROUTER_CONNECT_TIMEOUT_MS + config.ROUTER_STREAM_MAX_MS;
  const statement = config.DATABASE_CONNECT_TIMEOUT_MS + config.DATABASE_STATEMENT_TIMEOUT_MS + 2000;
  return config.ROUTER_REQUEST_BODY_TIMEOUT_MS + 2 * exchange + 10 * statement;
}

/** Serves until stopped; `announce` prints the readiness line (a worker tells its supervisor, which prints it). */
export async function serveProxy(config: Config, log: Logger, announce: boolean): Promise<void> {
  // The proxy never migrates: `npm start`, the admin process or `npm run db:migrate` does.
  // SQLite: the admin process checkpoints the WAL (admin/jobs/checkpointer.ts); 8000 pages (~32 MiB) only if it stops.
  const ctx = await createContextOrExit(config, log, { walAutocheckpointPages: 8000 });
  const lifecycle = createLifecycle();
  const credentials = createCredentialResolver(ctx);
  const admin = createAdminForwarder(config.adminUrl, config.ADMIN_BODY_TIMEOUT_MS);
  const upstream = createUpstream({
    allowPrivate: config.ROUTER_ALLOW_PRIVATE_TARGETS,
    connectTimeoutMs: config.ROUTER_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: config.ROUTER_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: config.ROUTER_STREAM_IDLE_MS,
    maxBodyBytes: config.ROUTER_MAX_RELAY_BYTES,
    maxTotalMs: config.ROUTER_STREAM_MAX_MS,
  });
  const feeRecipient = config.ROUTER_FEE_RECIPIENT ?? (await ensureOperatorWallet(ctx));
  const signer = createDigestSigner(config.ROUTER_SIGNING_THREADS);
  const services: RouterServices = {
    ctx,
    requestClaims: createRequestClaimStore(),
    limiter: createConcurrencyLimiter(config.ROUTER_MAX_CONCURRENT_PER_USER, {
      maxHoldMs: longestRouterCallMs(config),
      onReclaim: (userId) => log.error({ userId }, 'a router slot was held past the longest call: taken back'),
    }),
    waiting: createConcurrencyLimiter(config.ROUTER_MAX_CONCURRENT_PER_USER),
    upstream,
    feeRecipient: getAddress(feeRecipient),
    walletKeys: createWalletKeyCache(ctx),
    delegations: createDelegationSnapshots(ctx),
    signer,
    settlement: settlementOf(ctx),
  };
  const routes = buildRouterRoutes(services, lifecycle);
  const mcp = createMcpEndpoint(services, credentials, log);
  const server = createServer(
    { connectionsCheckingInterval: connectionsCheckingIntervalMs(config.HEADERS_TIMEOUT_MS) },
    tracked(
      lifecycle,
      buildProxyHandler({
        config,
        log,
        admin,
        credentials,
        routes,
        mcp,
        clientAddress: (req) =>
          stampClientAddress(
            ctx.box,
            clientAddressOf(req.socket.remoteAddress, req.headers['x-forwarded-for'], config.TRUSTED_PROXY_HOPS),
          ),
      }),
    ),
  );
  server.keepAliveTimeout = 65_000;
  // A request head must arrive within HEADERS_TIMEOUT_MS of connecting (else 408 with the envelope, from the
  // clientError listener). Node's requestTimeout runs only until a request has been received in full (a long
  // streamed answer is not cut; those are bounded by ROUTER_STREAM_MAX_MS). The router's own body reads answer 408
  // at ROUTER_REQUEST_BODY_TIMEOUT_MS, forwarded bodies at ADMIN_BODY_TIMEOUT_MS (proxy/admin-forward.ts); this is the
  // backstop for bodies nothing of ours reads (left unread after an early answer): Node gives up a little later.
  server.headersTimeout = config.HEADERS_TIMEOUT_MS;
  server.requestTimeout =
    config.HEADERS_TIMEOUT_MS + Math.max(config.ROUTER_REQUEST_BODY_TIMEOUT_MS, config.ADMIN_BODY_TIMEOUT_MS) + 5_000;
  server.on('clientError', clientErrorHandler(config.DOCS_URL));
  const slot = cluster.isWorker ? process.env[WORKER_SLOT_ENV] : undefined;
  const metrics = await startMetrics('proxy', config, log, createServer, slot);
  server.listen(config.PROXY_PORT, config.HOST, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr !== null ? addr.port : config.PROXY_PORT;
    lifecycle.serving();
    log.info({ host: config.HOST, port, admin: config.adminUrl }, 'proxy listening');
    if (announce) process.stdout.write(`${JSON.stringify({ ready: 'proxy', port })}\n`);
    else if (cluster.isWorker) reportServing(port);
  });
  onShutdown(log, config.SHUTDOWN_GRACE_MS, async () => {
    // An open MCP stream would hold the drain to its grace: ended now, its host reconnects to another process.
    mcp.close();
    if (!(await drainServer(server, lifecycle, config.SHUTDOWN_GRACE_MS)))
      log.warn({ graceMs: config.SHUTDOWN_GRACE_MS }, 'calls still in flight when the grace ran out were cut');
    await metrics.close();
    admin.close();
    await upstream.close();
    await signer.close();
    await ctx.db.close();
  });
}
