// Logs a few lines with the service's logger, configured from the environment as the servers are (LOG_FORMAT,
// LOG_FILE, LOG_LEVEL), then exits: what test/operations/log.test.ts reads from this process's stderr.
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../shared/log.js';

const log = createLogger(loadConfig(), 'log-child');
log.info({ correlationId: 'c-1', method: 'GET', path: '/a b', status: 200 }, 'request');
log.warn({ headers: { authorization: 'Bearer child-secret-1' } }, 'with a header');
log.error({ err: new Error('boom') }, 'failed');
