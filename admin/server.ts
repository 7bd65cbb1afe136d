// Entry point of the admin process: `npm run start:admin`.
import { createServer } from 'node:http';
import { loadConfigOrExit } from '../config/index.js';
import { ensureOperatorWallet } from '../shared/accounts/service-wallets.js';
import { surviveBrokenPipes } from '../shared/broken-pipes.js';
import { createContextOrExit } from '../shared/context.js';
import { clientErrorHandler, connectionsCheckingIntervalMs } from '../shared/errors/client-error.js';
import { ensureSigningKey } from '../shared/keys/signing-keys.js';
import { createLogger } from '../shared/log.js';
import { startMetrics } from '../shared/metrics/listener.js';
import { settlementOf } from '../shared/settlement/backend.js';
import { onShutdown } from '../shared/shutdown.js';
import { createLifecycle, drainServer, tracked } from '../shared/lifecycle.js';
import { buildAdminApp } from './app.js';
import { adminJobs, startJobs } from './jobs/runner.js';

surviveBrokenPipes();
const config = loadConfigOrExit();
const log = createLogger(config, 'admin');
const ctx = await createContextOrExit(config, log, { migrate: process.env.PAYROUTE_SKIP_MIGRATE !== '1' });
await ensureSigningKey(ctx);
await ensureOperatorWallet(ctx);
// The rpc backend: the chain decides what was paid (Settled / Expired); the admin process asks it.
const stopJobs = startJobs(adminJobs(ctx, log, settlementOf(ctx).chain));
const lifecycle = createLifecycle();
const { app } = buildAdminApp(ctx, lifecycle);
const server = createServer(
  { connectionsCheckingInterval: connectionsCheckingIntervalMs(config.HEADERS_TIMEOUT_MS) },
  tracked(lifecycle, app.callback()),
);
server.keepAliveTimeout = 65_000;
// A request head must arrive within HEADERS_TIMEOUT_MS of connecting; the routes' body read answers 408 with the
// envelope at ADMIN_BODY_TIMEOUT_MS (admin/middleware/json-body.ts). requestTimeout is the backstop for bodies no
// route reads (a request answered before its body, e.g. 401): Node gives up on them a little later.
server.headersTimeout = config.HEADERS_TIMEOUT_MS;
server.requestTimeout = config.HEADERS_TIMEOUT_MS + config.ADMIN_BODY_TIMEOUT_MS + 5_000;
server.on('clientError', clientErrorHandler(config.DOCS_URL));
const metrics = await startMetrics('admin', config, log, createServer);
server.listen(config.ADMIN_PORT, config.HOST, () => {
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : config.ADMIN_PORT;
  lifecycle.serving();
  log.info({ host: config.HOST, port }, 'admin listening');
  // Machine-readable readiness line for supervisors and tests (stdout carries nothing else).
  process.stdout.write(`${JSON.stringify({ ready: 'admin', port })}\n`);
});
onShutdown(log, config.SHUTDOWN_GRACE_MS, async () => {
  if (!(await drainServer(server, lifecycle, config.SHUTDOWN_GRACE_MS)))
    log.warn({ graceMs: config.SHUTDOWN_GRACE_MS }, 'requests still in flight when the grace ran out were cut');
  // After the requests: a background run still going finishes its transaction before the database closes.
  await stopJobs();
  await metrics.close();
  await ctx.db.close();
});
