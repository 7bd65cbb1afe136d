// Entry point of the proxy process: `npm run start:proxy`.
import { createServer } from 'node:http';
import { loadConfigOrExit } from '../config/index.js';
import { createLogger } from '../shared/log.js';
import { onShutdown } from '../shared/shutdown.js';
import { buildProxyHandler } from './app.js';
import { createAdminRelay } from './relay.js';

const config = loadConfigOrExit();
const log = createLogger(config, 'proxy');
const relay = createAdminRelay(config.adminUrl);
const server = createServer(buildProxyHandler(config, log, relay));
server.keepAliveTimeout = 65_000;
server.headersTimeout = 30_000;
server.requestTimeout = 120_000;
server.listen(config.PROXY_PORT, config.HOST, () => {
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : config.PROXY_PORT;
  log.info({ host: config.HOST, port, admin: config.adminUrl }, 'proxy listening');
  process.stdout.write(`${JSON.stringify({ ready: 'proxy', port })}\n`);
});
onShutdown(log, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  relay.close();
});
