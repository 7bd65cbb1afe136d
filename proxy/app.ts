// The proxy process's request handler: the public front door. It serves /healthz and (from the router issue
// on) /api/v1/router/* and /api/v1/proxy itself, and relays everything else to the admin process.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/index.js';
import { correlationId } from '../shared/correlation.js';
import { AppError } from '../shared/errors/app-error.js';
import type { Logger } from '../shared/log.js';
import type { Relay } from './relay.js';
import { sendError, sendJson } from './respond.js';

/** Paths the proxy owns; until the router lands they answer 404 with the envelope. */
const ROUTER_PATHS = /^\/(api\/v1\/(router(\/|$)|proxy(\/|$))|proxy(\/|$))/;

export function buildProxyHandler(config: Config, log: Logger, relay: Relay) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const id = correlationId(req.headers['x-correlation-id'] ?? req.headers['x-request-id']);
    req.headers['x-correlation-id'] = id;
    res.setHeader('x-correlation-id', id);
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (path === '/healthz') {
      sendJson(res, 200, { status: 'ok', service: 'proxy' });
      return;
    }
    if (ROUTER_PATHS.test(path)) {
      sendError(res, new AppError('BCK.HTTP.0404', `no route for ${req.method ?? 'GET'} ${path}`), id, config.DOCS_URL);
      return;
    }
    // Refuse a declared oversize body here: relaying it would race the admin's 413 against the upload and
    // could surface as a 502. (Chunked bodies are still limited by the admin's parser.)
    const declared = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(declared) && declared > config.BODY_LIMIT_BYTES) {
      res.setHeader('connection', 'close');
      sendError(res, new AppError('BCK.HTTP.0413', 'request body exceeds the size limit'), id, config.DOCS_URL);
      req.resume();
      return;
    }
    relay.forward(req, res, (err) => {
      log.warn({ err: err.message, correlationId: id }, 'admin relay failed');
      sendError(res, new AppError('BCK.HTTP.0502', 'the admin process did not answer'), id, config.DOCS_URL);
    });
  };
}
