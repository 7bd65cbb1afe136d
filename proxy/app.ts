// The proxy process's request handler: the public front door. It serves its own routes (/healthz and the router:
// /api/v1/router/*, /api/v1/proxy, /proxy) from its route table, the MCP endpoint (/mcp), answers /metrics itself (its own metrics, never
// the admin's), and forwards everything else to the admin process.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/index.js';
import type { CredentialResolver } from '../shared/auth/credential-resolver.js';
import { CLIENT_ADDRESS_HEADER } from '../shared/client-address.js';
import { correlationId } from '../shared/correlation.js';
import { AppError, asAppError } from '../shared/errors/app-error.js';
import type { Logger } from '../shared/log.js';
import { type HttpObservation, observeRequest } from '../shared/metrics/http.js';
import { METRICS_PATH, ROUTE_FORWARDED, registerRouteTemplates } from '../shared/metrics/labels.js';
import { mainPortAccess, metricsAnswer } from '../shared/metrics/endpoint.js';
import { type RequestTarget, targetOf } from './http/request-target.js';
import type { RequestFacts, RouteMatch, RouteTable } from './http/route-table.js';
import type { AdminForwarder } from './admin-forward.js';
import { MCP_PATH, type McpEndpoint } from './mcp/endpoint.js';
import { sendError, writeHead } from './respond.js';

/** Paths the proxy owns; anything under them that no route serves is answered here, never forwarded. Tested on the
 *  path as sent, the one the admin process would route on, never a URL parser's reading of it. */
const OWN_PATHS = /^\/(?:healthz$|readyz$|mcp$|api\/v1\/(?:router|proxy)(?:\/|$)|proxy(?:\/|$))/;

export interface ProxyDeps {
  readonly config: Config;
  readonly log: Logger;
  /** Where every path the proxy does not own goes (the admin process). */
  readonly admin: AdminForwarder;
  readonly credentials: CredentialResolver;
  readonly routes: RouteTable;
  /** {host_url}/mcp (proxy/mcp/endpoint.ts). */
  readonly mcp: McpEndpoint;
  /** The CLIENT_ADDRESS_HEADER value vouching for a request's client address (shared/client-address.ts). */
  readonly clientAddress: (req: IncomingMessage) => string;
}

/** The paymentId an error names (a duplicate requestId's original payment, a paid call that failed after paying). */
function paymentIdOf(err: AppError): string | undefined {
  const id = err.extra.paymentId;
  return typeof id === 'string' ? id : undefined;
}

export function buildProxyHandler({ config, log, admin, credentials, routes, mcp, clientAddress }: ProxyDeps) {
  registerRouteTemplates([...routes.routes().map((r) => r.path), MCP_PATH]);
  const metricsAccess = mainPortAccess(config.METRICS_TOKEN);

  /** Runs the route the request names; what no route takes is 404 or 405, after a valid credential. */
  async function dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    target: RequestTarget,
    id: string,
    facts: RequestFacts,
    http: HttpObservation,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const path = target.pathname;
    // A dot segment, backslash or encoded separator is no route, whatever it resolves to (shared/request-path.ts).
    if (path === MCP_PATH && !target.ambiguous) {
      http.route = MCP_PATH;
      await mcp.serve(req, res, facts);
      return;
    }
    const found: RouteMatch = target.ambiguous ? { type: 'not-found' } : routes.match(method, path);
    if (found.type === 'route') {
      http.route = found.route.path;
      await found.route.serve({ req, res, target, correlationId: id, params: found.params, facts }, credentials);
      return;
    }
    // Only a valid credential learns whether an API path exists for another method, so an unauthenticated caller
    // cannot map the API (a public path, /healthz, hides nothing).
    if (found.type === 'not-found' || !found.public) await credentials.resolve(req.headers.authorization);
    if (found.type === 'method-not-allowed') {
      res.setHeader('allow', found.allow.join(', '));
      throw new AppError('BCK.HTTP.0405', { details: `${method} is not allowed on ${path}` });
    }
    throw new AppError('BCK.HTTP.0404', { details: `no route for ${method} ${path}` });
  }

  /** One request of the proxy's own routes, logged at info when it finished (never its headers or body). */
  async function serveOwn(
    req: IncomingMessage,
    res: ServerResponse,
    target: RequestTarget,
    id: string,
    http: HttpObservation,
  ) {
    const started = performance.now();
    const facts: RequestFacts = { paymentId: undefined };
    try {
      await dispatch(req, res, target, id, facts, http);
    } catch (err) {
      const appError = asAppError(err);
      if (appError.httpStatus >= 500) log.error({ err, correlationId: id }, 'router request failed');
      facts.paymentId ??= paymentIdOf(appError);
      // A body refused before it was read (401, 404, 413, 408...) is drained or the connection closed by sendError
      // (proxy/respond.ts writeHead).
      sendError(res, appError, id, config.DOCS_URL);
    }
    log.info(
      {
        correlationId: id,
        method: req.method,
        path: target.pathname,
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 1000) / 1000,
        ...(facts.paymentId === undefined ? {} : { paymentId: facts.paymentId }),
      },
      'request',
    );
  }

  /** The proxy's own metrics, never the admin's (those are on the admin's port): /metrics is never forwarded. */
  function serveMetrics(req: IncomingMessage, res: ServerResponse, id: string): void {
    metricsAnswer(metricsAccess, req.method, req.headers.authorization).then(
      (answer) => {
        writeHead(res, answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
        res.end(answer.body);
      },
      (err: unknown) => sendError(res, asAppError(err), id, config.DOCS_URL),
    );
  }

  /** Resolves once the request's own work is done (a forwarded request's is the forwarder's, tracked by its response). */
  return (req: IncomingMessage, res: ServerResponse): Promise<void> | undefined => {
    const http = observeRequest(req.method, res);
    const id = correlationId(req.headers['x-correlation-id'] ?? req.headers['x-request-id']);
    req.headers['x-correlation-id'] = id;
    res.setHeader('x-correlation-id', id);
    const target = targetOf(req.url ?? '/');
    if (target === undefined) {
      sendError(res, new AppError('BCK.HTTP.0400', { details: 'malformed request target' }), id, config.DOCS_URL);
      return;
    }
    if (target.pathname === METRICS_PATH) {
      http.route = METRICS_PATH;
      serveMetrics(req, res, id);
      return;
    }
    if (OWN_PATHS.test(target.pathname)) {
      return serveOwn(req, res, target, id, http).catch((err: unknown) =>
        log.error({ err, correlationId: id }, 'request log'),
      );
    }
    http.route = ROUTE_FORWARDED;
    // Refuse a declared oversize body here: forwarding it would race the admin's 413 against the upload and
    // could surface as a 502. (Chunked bodies are still limited by the admin's parser.)
    const declared = Number(req.headers['content-length'] ?? '0');
    // The 413 closes the connection (proxy/respond.ts writeHead).
    if (Number.isFinite(declared) && declared > config.BODY_LIMIT_BYTES) {
      sendError(
        res,
        new AppError('BCK.HTTP.0413', { details: 'request body exceeds the size limit' }),
        id,
        config.DOCS_URL,
      );
      return;
    }
    // The admin process routes on the path as sent, as this process decided on it: never a URL parser's reading
    // of it (an absolute-form target is sent on in origin-form, its path unchanged).
    const forwarded = target.originForm();
    if (forwarded !== req.url) req.url = forwarded;
    // Set over whatever the client sent: only the proxy may tell the admin process where a request came from.
    req.headers[CLIENT_ADDRESS_HEADER] = clientAddress(req);
    admin.forward(req, res, {
      onError(err) {
        log.warn({ err: err.message, correlationId: id }, 'admin forward failed');
        sendError(
          res,
          new AppError('BCK.HTTP.0502', { details: 'the admin process did not answer' }),
          id,
          config.DOCS_URL,
        );
      },
      onBodyTimeout(timeoutMs) {
        // As the admin process answers a stalled body on its own port (RFC 9110 §15.5.9), the connection closed
        // (proxy/respond.ts writeHead).
        const err = new AppError('BCK.HTTP.0408', {
          details: `the request body did not arrive within ${timeoutMs} ms`,
          params: {
            timeoutMs,
          },
        });
        sendError(res, err, id, config.DOCS_URL);
      },
    });
  };
}
