// A request answered before its body arrived (refused before the body was read: 401 / 403 from the route's access
// declaration, 404 / 405, 415, 413 for a declared or counted oversize body, 408 for a stalled one; or a handler that
// never reads a body) leaves the rest of that body on the connection, in front of the client's next request. Node
// drops it only when nothing ever touched the body (_http_server.js resOnFinish -> req._dump()); a body parser that
// stopped half-way (a 413 counted on a chunked body) leaves the request paused, the socket stops being read, and the
// next request on the connection waits for ever. So every answer of both processes goes through `settleUnreadBody`:
// - a small declared rest (at most DRAIN_MAX_BYTES) is read and dropped, and the connection kept: cheaper for the
//   client than a new connection, and bounded (Node's requestTimeout, the forwarder's body timeout);
// - anything else (a larger or chunked rest, whose size only the client knows; any 408 or 413) is answered with
//   `Connection: close` (RFC 9110 §7.6.1), after which the server closes while still reading and dropping what the
//   client sends (shared/lingering-close.ts), so the answer reaches the client.
// Both processes use it; it takes requests and responses by their shape, so no node:http import is needed here.
import type { Socket } from 'node:net';
import { lingerAfter } from './lingering-close.js';

/** The largest declared body still arriving after its answer that is read and dropped rather than the connection closed. */
export const DRAIN_MAX_BYTES = 65_536;

/** What becomes of the rest of a request's body once its answer is written. */
export type UnreadBody = 'none' | 'drain' | 'close';

export interface RequestShape {
  /** The whole message (body included) has been received (Node's IncomingMessage.complete). */
  readonly complete: boolean;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface ResponseShape {
  readonly socket: Socket | null;
  readonly headersSent: boolean;
  setHeader(name: string, value: string): unknown;
}

/** The fate of the rest of `req`'s body when it is answered with `status` now. */
export function unreadBodyOf(req: RequestShape, status: number): UnreadBody {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const length = req.headers['content-length'];
  // RFC 9112 §6.3: neither header means no body (most GETs); `0` means an empty one.
  if (!chunked && (length === undefined || length === '0')) return 'none';
  // An oversize or stalled body is never waited for, even if its last bytes happen to be in already.
  if (status === 408 || status === 413) return 'close';
  if (req.complete) return 'none';
  if (chunked) return 'close';
  const declared = Number(length);
  return Number.isSafeInteger(declared) && declared <= DRAIN_MAX_BYTES ? 'drain' : 'close';
}

/**
 * Decides the fate of the rest of `req`'s body as its answer of `status` is about to be written (its head not sent
 * yet): `close` sets `Connection: close` and makes the connection linger after the answer; `drain` and `close` both
 * let the rest of the body flow, and be dropped, rather than stay paused where a stopped parser left it.
 */
export function settleUnreadBody(
  req: RequestShape & { resume(): unknown; unpipe(): unknown },
  res: ResponseShape,
  status: number,
): UnreadBody {
  const fate = unreadBodyOf(req, status);
  if (fate === 'none') return fate;
  if (fate === 'close' && !res.headersSent) {
    res.setHeader('connection', 'close');
    lingerAfter(res);
  }
  req.unpipe();
  req.resume();
  return fate;
}
