// What both servers answer when Node's HTTP parser gives up on a connection before any handler saw a request
// (the server's 'clientError' event). Node's own answers (_http_server.js socketOnError) are a bare status line with
// no body: not the error envelope every other refusal is. Here each gets the envelope, `Connection: close` and a
// lingering close (a client still sending its oversize head must read the answer, not a reset). Written on the
// socket itself: there is no request or response object yet.
import type { Duplex } from 'node:stream';
import { correlationId } from '../correlation.js';
import { lingerClose } from '../lingering-close.js';
import { AppError, toEnvelope } from './app-error.js';
import type { ErrorCode } from './catalogue.js';

/** The clientError handled on each socket: the parser may report again on the bytes that arrive while lingering. */
const handled = new WeakSet<Duplex>();

const STATUS_LINES: Readonly<Record<number, string>> = {
  400: 'HTTP/1.1 400 Bad Request',
  408: 'HTTP/1.1 408 Request Timeout',
  413: 'HTTP/1.1 413 Payload Too Large',
  414: 'HTTP/1.1 414 URI Too Long',
  431: 'HTTP/1.1 431 Request Header Fields Too Large',
};

/** The whole HTTP/1.1 answer carrying `error`'s envelope, closing the connection. */
function envelopeResponse(error: AppError, docsUrl: string): string {
  const id = correlationId(undefined);
  const body = JSON.stringify(toEnvelope(error, id, docsUrl));
  return [
    STATUS_LINES[error.httpStatus] ?? STATUS_LINES[400],
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    `x-correlation-id: ${id}`,
    '',
    body,
  ].join('\r\n');
}

/** The first bytes of a request: a method token and a space (RFC 9112 §3). */
const REQUEST_START = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ /;

/**
 * Whether a header overflow happened in the request line. llhttp counts the request line and the header fields
 * alike against maxHeaderSize, and Node hands over only the chunk it was parsing (`rawPacket`) and where in it the
 * parser stopped (`bytesParsed`). A line feed before that point ends the request line in this chunk: the headers
 * overflowed. Else, a chunk that starts the request overflowed in its request line; a later chunk with no line feed
 * is the request line's if it holds no whitespace, which a request-target never contains (RFC 9112 §3.2), and the
 * headers' otherwise.
 */
function requestLineOverflowed(err: Error): boolean {
  const { rawPacket, bytesParsed } = err as Error & { rawPacket?: unknown; bytesParsed?: unknown };
  if (!Buffer.isBuffer(rawPacket)) return false;
  const parsed = rawPacket.subarray(0, typeof bytesParsed === 'number' ? bytesParsed : rawPacket.length);
  if (parsed.includes(0x0a)) return false;
  const text = parsed.toString('latin1');
  return REQUEST_START.test(text) || !/[ \t\r]/.test(text);
}

/** What the parser's complaint is, for the caller (Node's own answers carry no envelope). */
function parserRefusal(err: Error): AppError {
  const refuse = (c: ErrorCode, details: string) => new AppError(c, { details, cause: err });
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refuse('BCK.HTTP.0408', 'the request did not arrive in time');
    case 'HPE_HEADER_OVERFLOW':
      // RFC 9110 §15.5.15 for the request line, RFC 6585 §5 for the header section.
      return requestLineOverflowed(err)
        ? refuse('BCK.HTTP.0414', 'the request line exceeds the size limit')
        : refuse('BCK.HTTP.0431', 'the request header fields exceed the size limit');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return refuse('BCK.HTTP.0413', 'the chunk extensions exceed the size limit');
    default:
      return refuse('BCK.HTTP.0400', 'the request is not valid HTTP/1.1');
  }
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
 * `requestTimeout` (head and body; Node reports both as ERR_HTTP_REQUEST_TIMEOUT) gets 408 BCK.HTTP.0408
 * (RFC 9110 §15.5.9); a request line or header section over the size limit 414 or 431; anything else the parser
 * refuses 400. Each with the envelope and `Connection: close`, then the connection is closed.
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
    const response = envelopeResponse(parserRefusal(err), docsUrl);
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
