// Forwards every path the proxy does not serve to the admin process (docs/architecture.md, "Forwarding"). An
// explicit keep-alive agent matters: without it http-proxy-3 opens a connection per request and halves throughput.
import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { createProxyServer } from 'http-proxy-3';

export interface AdminForwarder {
  forward(req: IncomingMessage, res: ServerResponse, onError: (err: Error) => void): void;
  close(): void;
}

export function createAdminForwarder(adminUrl: string): AdminForwarder {
  const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });
  const proxy = createProxyServer({ target: adminUrl, agent, xfwd: true, proxyTimeout: 60_000 });
  return {
    forward(req, res, onError) {
      proxy.web(req, res, {}, (err: Error) => onError(err));
    },
    close() {
      proxy.close();
      agent.destroy();
    },
  };
}
