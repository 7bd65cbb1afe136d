// Entry point of the proxy process: `npm run start:proxy`. With PROXY_WORKERS > 1 this process supervises that many
// workers sharing its port (proxy/cluster.ts); otherwise it is the proxy itself.
import cluster from 'node:cluster';
import { loadConfigOrExit } from '../config/index.js';
import { surviveBrokenPipes } from '../shared/broken-pipes.js';
import { createContextOrExit } from '../shared/context.js';
import { createLogger } from '../shared/log.js';
import { superviseWorkers } from './cluster.js';
import { serveProxy } from './serve.js';

surviveBrokenPipes();
const config = loadConfigOrExit();
const log = createLogger(config, 'proxy');
if (cluster.isPrimary && config.PROXY_WORKERS > 1) {
  // A secrets key that does not open the data is refused once, here, before any worker is forked: each worker would
  // be refused in turn, and the supervisor would take that for a crash loop.
  await (await createContextOrExit(config, log)).db.close();
  superviseWorkers(config, log);
} else await serveProxy(config, log, cluster.isPrimary);
