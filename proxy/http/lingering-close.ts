// Lingering close (RFC 9112 §9.6): a response that closes the connection while the client is still sending (a 413
// for an oversize body, a 408 for a stalled one) must reach that client. Node ends AND destroys the socket as soon as
// a `Connection: close` response is written (_http_server.js resOnFinish -> socket.destroySoon()): bytes the client
// sent meanwhile are still unread in the kernel, so the close sends a TCP reset, and a reset makes the client's
// kernel drop our response before the client has read it. Here the sending half is closed first, what the client
// still sends is read and dropped, and the socket is destroyed once the client closes its side or LINGER_MS pass.
import type { ServerResponse } from 'node:http';

/** How long a closing connection keeps reading (and dropping) what its client still sends. */
export const LINGER_MS = 2_000;

function dropAndWait(this: NonNullable<ServerResponse['socket']>): void {
  this.end();
  this.resume();
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once('close', () => clearTimeout(timer));
}

/** Makes the socket of `res` linger after its `Connection: close` response instead of being destroyed at once. */
export function lingerAfter(res: ServerResponse): void {
  const socket = res.socket;
  if (socket !== null) socket.destroySoon = dropAndWait;
}
