// Serves an app (express or a plain node:http listener) on 127.0.0.1 at a free port, for the merchants.
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Running {
  readonly url: string;
  close(): Promise<void>;
}

export async function listen(handler: RequestListener): Promise<Running> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
