// Serves an app (express or a plain node:http listener) on 127.0.0.1 at a free port (or the one given), for the
// merchants.
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Running {
  readonly url: string;
  close(): Promise<void>;
}

export async function listen(handler: RequestListener, fixedPort = 0): Promise<Running> {
  const server: Server = createServer(handler);
  // A deep accept queue: the concurrency tests open ~1000 connections at once (500 probes, 500 paid hops) to one
  // merchant in a busy test process; past Node's default backlog (511) the kernel drops SYNs, and a retransmitted
  // SYN can outlast the router's connect timeout on a loaded machine (a 502 that is the test merchant's, not ours).
  await new Promise<void>((resolve, reject) => {
    // A fixed port may be taken: fail the start rather than wait for a 'listening' that never comes.
    server.once('error', reject);
    server.listen({ port: fixedPort, host: '127.0.0.1', backlog: 4096 }, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
