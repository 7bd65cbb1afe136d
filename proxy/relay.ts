// Relays every path the proxy does not serve to the admin process. An explicit keep-alive agent
// matters: without it http-proxy-3 opens a connection per request and halves throughput (measured in BENCHMARKS.md).
import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { createProxyServer } from 'http-proxy-3';

export interface Relay {
  forward(req: IncomingMessage, res: ServerResponse, onError: (err: Error) => void): void;
  close(): void;
}

export function createAdminRelay(adminUrl: string): Relay {
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
