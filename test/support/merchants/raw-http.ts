// A merchant that writes its answers by hand on a node:net socket, for framings node:http will not produce (a 204
// with a Content-Length, a 205 with content, Transfer-Encoding: gzip): what reaches the outbound module is then
// exactly what undici parsed off the wire, not what a well-behaved server would have sent.
import { type AddressInfo, type Socket, createServer } from 'node:net';
import type { Running } from './listen.js';

/**
 * Serves `answers` (request path -> the whole answer: status line, header section, blank line, content) on
 * 127.0.0.1. Each answer is written once its request's header section is in, then the connection is ended, so an
 * answer framed "until the connection closes" (RFC 9112 §6.3) ends too; answers should say `connection: close`
 * so the client does not try to reuse a closing connection. The paths in `stall` keep the connection open after
 * their answer instead (a merchant that stops sending). Unknown paths get a 404.
 */
export async function rawMerchant(
  answers: Readonly<Record<string, string>>,
  stall: readonly string[] = [],
): Promise<Running> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // the client may leave first
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const path = head.split(' ')[1] ?? '';
      const answer = answers[path] ?? 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n';
      if (stall.includes(path)) socket.write(answer, 'latin1');
      else socket.end(answer, 'latin1');
      head = '';
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const s of sockets) s.destroy();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
