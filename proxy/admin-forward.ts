// Forwards every path the proxy does not serve to the admin process (docs/architecture.md, "Forwarding"). An
// explicit keep-alive agent matters: without it http-proxy-3 opens a connection per request and halves throughput
// (BENCHMARKS.md).
import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createProxyServer } from 'http-proxy-3';
import { lingerAfter } from '../shared/lingering-close.js';
import { unreadBodyOf } from '../shared/unread-body.js';

export interface ForwardHandlers {
  /** The admin process could not be reached or did not answer. */
  onError(err: Error): void;
  /**
   * The request's body did not arrive within the bound and no answer has begun: answer 408 and close the
   * connection. The forwarded request has been aborted.
   */
  onBodyTimeout(timeoutMs: number): void;
}

export interface AdminForwarder {
  forward(req: IncomingMessage, res: ServerResponse, handlers: ForwardHandlers): void;
  close(): void;
}

/** RFC 9112 §6.3: a request with neither Content-Length nor Transfer-Encoding has no body. */
const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * `bodyTimeoutMs` (ADMIN_BODY_TIMEOUT_MS) bounds the time a forwarded request's body may take once its headers are
 * in. The body is streamed to the admin process as it arrives, so a client that stalls or trickles would otherwise
 * hold a proxy connection and a connection of the forwarder's pool until Node's requestTimeout backstop; past the
 * bound the forwarded request is aborted and the client answered 408, as the admin process answers on its own port.
 */
export function createAdminForwarder(adminUrl: string, bodyTimeoutMs: number): AdminForwarder {
  const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });
  // toProxy: the request's path goes on as it is. Without it http-proxy-3 rebuilds the path through WHATWG URL
  // parsing, which resolves dot segments and reads `\` as `/`: `/api/v1/x/../protocol/agents` would reach the
  // admin's agents route while the admin process itself finds no route at that path (shared/request-path.ts).
  const proxy = createProxyServer({ target: adminUrl, agent, xfwd: true, proxyTimeout: 60_000, toProxy: true });
  /** The outgoing request of each forwarded request whose body is still arriving (to abort it when it is late). */
  const outgoing = new WeakMap<IncomingMessage, ClientRequest>();
  /** Forwarded requests given up on (late, or answered before their body was in): their outgoing request, if it
   *  has none yet, is aborted when it is made, and its failure is not the admin process's. */
  const late = new WeakSet<IncomingMessage>();
  proxy.on('proxyReq', (proxyReq, req) => {
    if (late.has(req)) proxyReq.destroy();
    else if (!req.complete && hasBody(req)) outgoing.set(req, proxyReq);
  });
  proxy.on('proxyRes', (proxyRes, req, res) => {
    // The admin process answered before the client's body was all in (a refusal before reading it: 401, 404, 413).
    // A small rest keeps flowing to the admin process, which drains it by the same rule (shared/unread-body.ts), so
    // both connections stay usable. Otherwise, or when the admin process closes its connection anyway, the client's
    // connection is closed too, said so in the answer relayed to it, and the rest of its body dropped here: left
    // piped into a forwarded request the admin process no longer reads, it would stall the client's connection.
    const adminCloses = /(?:^|,)\s*close\s*(?:,|$)/i.test(String(proxyRes.headers.connection ?? ''));
    let fate = unreadBodyOf(req, proxyRes.statusCode ?? 502);
    if (fate === 'drain' && adminCloses) fate = 'close';
    if (fate !== 'close') return;
    proxyRes.headers.connection = 'close';
    lingerAfter(res);
    late.add(req);
    req.unpipe();
    req.resume();
    // The forwarded request's body is cut short: its connection must not go back to the pool, where the admin
    // process would read the next forwarded request as the rest of this body. Once the answer is relayed.
    const forwarded = outgoing.get(req);
    outgoing.delete(req);
    const cut = (): void => {
      forwarded?.destroy();
    };
    if (proxyRes.complete) cut();
    else proxyRes.once('end', cut);
  });

  function watchBody(req: IncomingMessage, res: ServerResponse, handlers: ForwardHandlers): void {
    const timer = setTimeout(() => {
      if (req.complete) return;
      late.add(req);
      outgoing.get(req)?.destroy();
      outgoing.delete(req);
      if (res.headersSent) {
        // The admin process answered before the body was in (a refusal such as 401): nothing more can be said on
        // this connection, whose unread rest of a body still stands before any next request.
        req.socket.destroy();
        return;
      }
      handlers.onBodyTimeout(bodyTimeoutMs);
    }, bodyTimeoutMs);
    // Not on the request's or the response's 'close': both come when an early answer is finished, while the rest
    // of the body may still be trickling in.
    const socket = req.socket;
    const done = (): void => {
      clearTimeout(timer);
      outgoing.delete(req);
      req.off('end', done);
      socket.off('close', done);
    };
    req.once('end', done);
    socket.once('close', done);
  }

  return {
    forward(req, res, handlers) {
      if (hasBody(req) && !req.complete) watchBody(req, res, handlers);
      proxy.web(req, res, {}, (err: Error) => {
        // Aborting a late forwarded request is ours, not the admin process's failure: its 408 is already answered.
        if (!late.has(req)) handlers.onError(err);
      });
    },
    close() {
      proxy.close();
      agent.destroy();
    },
  };
}
