// What both servers answer when Node's HTTP parser gives up on a connection before any handler saw a request
// (the server's 'clientError' event). Node's own answer to a timeout is a bare `408 Request Timeout` with no body
// (_http_server.js socketOnError), which is not the error envelope every other refusal is; the other cases keep
// Node's answers. Written on the socket itself: there is no request or response object yet.
import type { Duplex } from 'node:stream';
import { correlationId } from '../correlation.js';
import { lingerClose } from '../lingering-close.js';
import { AppError, toEnvelope } from './app-error.js';

/** Node's answers to the parser errors other than a timeout (_http_server.js), unchanged. */
const BARE: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/** The clientError handled on each socket: the parser may report again on the bytes that arrive while lingering. */
const handled = new WeakSet<Duplex>();

function timeoutResponse(docsUrl: string): string {
  const id = correlationId(undefined);
  const body = JSON.stringify(
    toEnvelope(new AppError('BCK.HTTP.0408', 'the request did not arrive in time'), id, docsUrl),
  );
  return [
    'HTTP/1.1 408 Request Timeout',
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    `x-correlation-id: ${id}`,
    '',
    body,
  ].join('\r\n');
}

/**
 * Whether the connection has carried any answer. Node writes its own answer whenever none is in flight
 * (_http_server.js socketOnError), even after an earlier one whose request's body is still arriving (answered
 * early, e.g. 401): a status line there answers nothing the client can match. Only a connection's first request
 * is answered here; later ones are only closed.
 */
function answered(socket: Duplex): boolean {
  return !('bytesWritten' in socket) || socket.bytesWritten !== 0;
}

/**
 * The server's 'clientError' listener. A request that did not arrive within `headersTimeout` (its head) or
 * `requestTimeout` (head and body; Node reports both as ERR_HTTP_REQUEST_TIMEOUT) gets 408 BCK.HTTP.0408 with
 * `Connection: close` (RFC 9110 §15.5.9), then the connection is closed.
 */
export function clientErrorHandler(docsUrl: string): (err: Error, socket: Duplex) => void {
  return (err, socket) => {
    if (handled.has(socket)) return;
    handled.add(socket);
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'ECONNRESET' || !socket.writable || answered(socket)) {
      socket.destroy();
      return;
    }
    const response = code === 'ERR_HTTP_REQUEST_TIMEOUT' ? timeoutResponse(docsUrl) : (BARE[code] ?? BAD_REQUEST);
    // Lingering close (shared/lingering-close.ts), and nothing more is parsed: a request read after this answer
    // would be answered on a closed stream.
    socket.removeAllListeners('data');
    lingerClose(socket, response);
  };
}

/**
 * Node checks `headersTimeout` and `requestTimeout` only every `connectionsCheckingInterval` (default 30 s), so a
 * 20 s limit could let a connection be held for 50 s: check at a quarter of the limit, at most once a second (a
 * walk over the open connections' parser states, cheap).
 */
export function connectionsCheckingIntervalMs(headersTimeoutMs: number): number {
  return Math.min(1_000, Math.max(100, Math.floor(headersTimeoutMs / 4)));
}
