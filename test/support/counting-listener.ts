// A bare TCP listener that counts the connections it accepts and answers each with one fixed HTTP response: the
// SSRF tests prove "no connection was made" with it.
import { once } from 'node:events';
import { type AddressInfo, type Server, createServer } from 'node:net';

export interface Listener {
  server: Server;
  port: number;
  accepted: number;
}

export async function listen(
  host: string,
  port = 0,
  response = 'HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n',
): Promise<Listener> {
  const l: Listener = { server: createServer(), port: 0, accepted: 0 };
  l.server.on('connection', (socket) => {
    l.accepted++;
    socket.on('error', () => {});
    socket.end(response);
  });
  l.server.listen(port, host);
  await once(l.server, 'listening');
  l.port = (l.server.address() as AddressInfo).port;
  return l;
}
