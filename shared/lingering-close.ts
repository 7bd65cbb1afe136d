// Lingering close (RFC 9112 §9.6): a response that closes the connection while the client is still sending (a 413
// for an oversize body, a 408 for a stalled one) must reach that client. Node ends AND destroys the socket as soon as
// a `Connection: close` response is written (_http_server.js resOnFinish -> socket.destroySoon()): bytes the client
// sent meanwhile are still unread in the kernel, so the close sends a TCP reset, and a reset makes the client's
// kernel drop our response before the client has read it. Here the sending half is closed first, what the client
// still sends is read and dropped, and the socket is destroyed once the client closes its side or LINGER_MS pass.
// Both processes use it; it takes sockets by their stream shape, so no node:http import is needed here.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a closing connection keeps reading (and dropping) what its client still sends. */
export const LINGER_MS = 2_000;

/** Ends `socket` after `last` (if given), drops what still arrives, and destroys it after the client's close or LINGER_MS. */
export function lingerClose(socket: Duplex, last?: string): void {
  if (last === undefined) socket.end();
  else socket.end(last);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function dropAndWait(this: Socket): void {
  lingerClose(this);
}

/** Makes the socket of `res` linger after its `Connection: close` response instead of being destroyed at once. */
export function lingerAfter(res: { readonly socket: Socket | null }): void {
  const socket = res.socket;
  if (socket !== null) socket.destroySoon = dropAndWait;
}
