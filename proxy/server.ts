// Entry point of the proxy process: `npm run start:proxy`. With PROXY_WORKERS > 1 this process supervises that many
// workers sharing its port (proxy/cluster.ts); otherwise it is the proxy itself.
import cluster from 'node:cluster';
import { loadConfigOrExit } from '../config/index.js';
import { surviveBrokenPipes } from '../shared/broken-pipes.js';
import { createLogger } from '../shared/log.js';
import { superviseWorkers } from './cluster.js';
import { serveProxy } from './serve.js';

surviveBrokenPipes();
const config = loadConfigOrExit();
const log = createLogger(config, 'proxy');
if (cluster.isPrimary && config.PROXY_WORKERS > 1) superviseWorkers(config, log);
else await serveProxy(config, log, cluster.isPrimary);
