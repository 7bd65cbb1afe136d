// A TCP forwarder between the service and its PostgreSQL that a test can break, so database faults are made by the
// test and never by stopping the machine's server:
//   pass       forwards both ways (and again after any fault)
//   blackhole  accepts connections and keeps existing ones open, but every byte either way is swallowed, and so is a
//              close (FIN or reset) of either side: a database that "answers nothing" (a dropping network path, a
//              stalled server). Bytes swallowed stay lost; a side that closed meanwhile is gone, and the other learns
//              of it as on a real network: by a reset once it sends again.
//   cut        closes every connection (a reset) and refuses new ones until `pass`: a database that is down
import { type Server, type Socket, connect, createServer } from 'node:net';

export type FaultMode = 'pass' | 'blackhole' | 'cut';

export interface TcpFault {
  /** host:port to give the service instead of the database's. */
  readonly port: number;
  mode(next: FaultMode): void;
  /** Connections accepted so far (a measure of how often the service reconnected). */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function tcpFault(target: { host: string; port: number }): Promise<TcpFault> {
  let mode: FaultMode = 'pass';
  let accepted = 0;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();

  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    accepted += 1;
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // A close crosses only while the path passes; otherwise the other side finds out when it next sends.
    const closed = (other: Socket) => () => {
      if (mode === 'pass') end();
      else other.once('data', () => (mode === 'pass' ? end() : undefined));
    };
    client.on('error', () => undefined).on('close', closed(upstream));
    upstream.on('error', () => undefined).on('close', closed(client));
    // Forwarded by hand, not piped: in blackhole mode a chunk is dropped, not queued for later.
    client.on('data', (chunk: Buffer) => {
      if (mode !== 'pass') return;
      if (upstream.destroyed) client.resetAndDestroy();
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (mode !== 'pass') return;
      if (client.destroyed) upstream.destroy();
      else client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');

  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    mode(next) {
      mode = next;
      if (next === 'cut') {
        for (const { client, upstream } of pairs) {
          client.resetAndDestroy();
          upstream.destroy();
        }
        pairs.clear();
      }
    },
    close: () =>
      new Promise((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
