import type { IncomingMessage } from 'node:http';
import { AppError } from '../../shared/errors/app-error.js';

const EMPTY = Buffer.alloc(0);

/** How much of a request body is read, and for how long (ROUTER_MAX_REQUEST_BYTES, ROUTER_REQUEST_BODY_TIMEOUT_MS). */
export interface BodyLimits {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** One body being read. The listeners below are module functions (`this` is the request) that find it here. */
class BodyRead {
  readonly chunks: Buffer[] = [];
  size = 0;
  constructor(
    readonly limit: number,
    readonly timeoutMs: number,
    readonly resolve: (body: Buffer) => void,
    readonly reject: (err: unknown) => void,
    readonly timer: NodeJS.Timeout,
  ) {}
}

// Listeners and the timer callback are module functions, not closures made per request: an object literal of
// closures (or a named closure, which tsx's keepNames wraps) per body costs more than the small bodies it reads.
const reads = new WeakMap<IncomingMessage, BodyRead>();

/** Ends the read of `req` (listeners off, timer cleared); undefined if it had already ended. */
function endRead(req: IncomingMessage): BodyRead | undefined {
  const read = reads.get(req);
  if (read === undefined) return undefined;
  reads.delete(req);
  clearTimeout(read.timer);
  req.off('data', onData);
  req.off('end', onEnd);
  req.off('error', onError);
  req.off('close', onClose);
  return read;
}

function onData(this: IncomingMessage, chunk: Buffer): void {
  const read = reads.get(this);
  if (read === undefined) return;
  read.size += chunk.length;
  if (read.size > read.limit) {
    endRead(this);
    this.resume(); // the rest is discarded, not buffered
    read.reject(new AppError('BCK.HTTP.0413', { details: `request body exceeds ${read.limit} bytes` }));
    return;
  }
  read.chunks.push(chunk);
}

function onEnd(this: IncomingMessage): void {
  const read = endRead(this);
  if (read === undefined) return;
  const { chunks } = read;
  read.resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, read.size));
}

const cutOff = (): AppError => new AppError('BCK.HTTP.0400', { details: 'the request body was cut off' });

/** The client's connection failed mid-body (ECONNRESET, 'aborted'): the body was cut off, not a server fault. */
function onError(this: IncomingMessage): void {
  endRead(this)?.reject(cutOff());
}

function onClose(this: IncomingMessage): void {
  // The client went away before the end of its body.
  if (!this.complete) endRead(this)?.reject(cutOff());
}

/**
 * The body did not arrive within the bound (a stalled or trickling upload would otherwise hold its buffer, and on
 * /router/proxy the user's concurrency slot, for ever): 408 (RFC 9110 §15.5.9). The rest of the declared body
 * would still stand between this request and the next on the connection, so the connection is not reused: the
 * answer carries `Connection: close` (RFC 9110 §7.6.1), after which the server closes (RFC 9112 §9.6); whatever
 * arrives meanwhile is read and dropped, not buffered.
 */
function onTimeout(req: IncomingMessage): void {
  const read = endRead(req);
  if (read === undefined) return;
  req.resume(); // proxy/app.ts answers a 408 with `Connection: close`
  read.reject(
    new AppError('BCK.HTTP.0408', {
      details: `the request body did not arrive within ${read.timeoutMs} ms`,
      params: {
        timeoutMs: read.timeoutMs,
      },
    }),
  );
}

/**
 * Buffers a request body up to `limit` bytes; beyond it, 413 (and the rest is not read). The whole body must
 * arrive within `limits.timeoutMs` of this call, else 408 and the connection is closed.
 */
export async function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const limit = limits.maxBytes;
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > limit) {
    throw new AppError('BCK.HTTP.0413', { details: `request body exceeds ${limit} bytes` });
  }
  // RFC 9112 §6.3: a request with neither Content-Length nor Transfer-Encoding has no body (most GETs): skip
  // the stream machinery (an async iterator per request).
  if (declared === 0 && req.headers['transfer-encoding'] === undefined) return EMPTY;
  // The client left before we began reading (e.g. during the API-key lookup): Node destroyed the request then,
  // its 'close' (or 'error') is already past and no 'end' will come, so the listeners below would wait out the
  // whole timeout, holding the user's concurrency slot on /router/proxy. A destroyed stream hands on no more
  // data, even when the whole body had arrived; and there is nobody left to answer.
  if (req.destroyed || req.errored !== null) throw cutOff();
  // Listeners rather than `for await`: an async iterator per request costs more than the small bodies it reads.
  const { timeoutMs } = limits;
  return new Promise<Buffer>((resolve, reject) => {
    reads.set(req, new BodyRead(limit, timeoutMs, resolve, reject, setTimeout(onTimeout, timeoutMs, req)));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Reads and parses a JSON body; malformed JSON is a 400, never a 500. */
export async function readJson(req: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const body = await readBody(req, limits);
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new AppError('BCK.HTTP.0400', { details: 'request body is not valid JSON' });
  }
}
