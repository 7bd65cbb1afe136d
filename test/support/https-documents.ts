// A web server standing for a client's own site over https, serving JSON documents (Client ID Metadata Documents)
// from this test process, with a self-signed certificate for `localhost` (test/support/tls.ts) in a temporary
// directory. The stack's processes trust the certificate through NODE_EXTRA_CA_CERTS and reach 127.0.0.1 because
// ROUTER_ALLOW_PRIVATE_TARGETS=true (the SSRF guard's test and development switch): `stackEnv` says both.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSelfSigned } from './tls.js';

/** What a path answers: its body, and status and headers when not 200 JSON. */
export interface Served {
  body: string;
  status?: number;
  headers?: Record<string, string>;
}

export interface HttpsDocuments {
  /** https://localhost:<port> */
  readonly origin: string;
  /** The env a stack needs to fetch from this server. */
  readonly stackEnv: Readonly<Record<string, string>>;
  /** Serves `doc` (as JSON) at `url`'s path. */
  serve(url: string, doc: unknown, served?: Omit<Served, 'body'>): void;
  /** `url`'s path answers 404 from now on. */
  remove(url: string): void;
  /** How many times `url`'s path was fetched. */
  fetchCount(url: string): number;
  close(): Promise<void>;
}

export async function httpsDocuments(): Promise<HttpsDocuments> {
  const dir = mkdtempSync(join(tmpdir(), 'payroute-https-'));
  const { certPath, keyPath } = writeSelfSigned(dir, 'localhost', 'DNS:localhost,IP:127.0.0.1,IP:::1');
  const documents = new Map<string, Served>();
  const fetches = new Map<string, number>();
  const server: Server = createServer({ cert: readFileSync(certPath), key: readFileSync(keyPath) }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const d = documents.get(path);
    if (d === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(d.status ?? 200, { 'content-type': 'application/json', ...d.headers });
    res.end(d.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://localhost:${port}`,
    stackEnv: { ROUTER_ALLOW_PRIVATE_TARGETS: 'true', NODE_EXTRA_CA_CERTS: certPath },
    serve: (url, doc, served = {}) => documents.set(new URL(url).pathname, { body: JSON.stringify(doc), ...served }),
    remove: (url) => {
      documents.delete(new URL(url).pathname);
    },
    fetchCount: (url) => fetches.get(new URL(url).pathname) ?? 0,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
