// The proxy process's request handler: the public front door. It serves /healthz and the router paths
// (/api/v1/router/*, /api/v1/proxy, /proxy) itself and relays everything else to the admin process.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/index.js';
import type { Authenticator } from '../shared/accounts/api-keys.js';
import { correlationId } from '../shared/correlation.js';
import { AppError, asAppError } from '../shared/errors/app-error.js';
import type { Logger } from '../shared/log.js';
import { lingerAfter } from './http/lingering-close.js';
import { type RequestTarget, targetOf } from './http/request-target.js';
import type { RouteTable } from './http/route-table.js';
import type { Relay } from './relay.js';
import { sendError, sendJson } from './respond.js';

/** Paths the proxy owns; anything under them that no route serves is a 404 here, never relayed. */
const ROUTER_PATHS = /^\/(api\/v1\/(router(\/|$)|proxy(\/|$))|proxy(\/|$))/;

export interface ProxyDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly relay: Relay;
  readonly auth: Authenticator;
  readonly routes: RouteTable;
}

export function buildProxyHandler({ config, log, relay, auth, routes }: ProxyDeps) {
  async function serveRouter(
    req: IncomingMessage,
    res: ServerResponse,
    target: RequestTarget,
    id: string,
  ): Promise<void> {
    const principal = await auth.authenticate(req.headers.authorization);
    const path = target.pathname;
    const found = routes.match(req.method ?? 'GET', path);
    if (found === undefined) throw new AppError('BCK.HTTP.0404', `no route for ${req.method ?? 'GET'} ${path}`);
    if ('allow' in found) {
      res.setHeader('allow', found.allow.join(', '));
      throw new AppError('BCK.HTTP.0405', `${req.method ?? 'GET'} is not allowed on ${path}`);
    }
    await found.handler({ req, res, target, correlationId: id, principal, params: found.params });
  }

  // The per-request debug line is built only when it will be written (the level is fixed at start).
  const timed = log.isLevelEnabled('debug');
  return (req: IncomingMessage, res: ServerResponse): void => {
    const id = correlationId(req.headers['x-correlation-id'] ?? req.headers['x-request-id']);
    req.headers['x-correlation-id'] = id;
    res.setHeader('x-correlation-id', id);
    const target = targetOf(req.url ?? '/');
    if (target === undefined) {
      sendError(res, new AppError('BCK.HTTP.0400', 'malformed request target'), id, config.DOCS_URL);
      return;
    }
    if (target.pathname === '/healthz') {
      sendJson(res, 200, { status: 'ok', service: 'proxy' });
      return;
    }
    if (ROUTER_PATHS.test(target.pathname)) {
      const started = timed ? performance.now() : 0;
      serveRouter(req, res, target, id).then(
        () => {
          if (timed)
            log.debug(
              {
                correlationId: id,
                method: req.method,
                path: target.pathname,
                status: res.statusCode,
                ms: performance.now() - started,
              },
              'request',
            );
        },
        (err: unknown) => {
          const appError = asAppError(err);
          if (appError.httpStatus >= 500) log.error({ err, correlationId: id }, 'router request failed');
          // The rest of that body would stand between this request and the next on the connection: close it
          // (RFC 9110 §7.6.1) rather than read it.
          if (appError.httpStatus === 413 || appError.httpStatus === 408) {
            res.setHeader('connection', 'close');
            lingerAfter(res);
          }
          sendError(res, appError, id, config.DOCS_URL);
        },
      );
      return;
    }
    // Refuse a declared oversize body here: relaying it would race the admin's 413 against the upload and
    // could surface as a 502. (Chunked bodies are still limited by the admin's parser.)
    const declared = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(declared) && declared > config.BODY_LIMIT_BYTES) {
      res.setHeader('connection', 'close');
      lingerAfter(res);
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
