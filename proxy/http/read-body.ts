import type { IncomingMessage } from 'node:http';
import { AppError } from '../../shared/errors/app-error.js';

const EMPTY = Buffer.alloc(0);

/** Buffers a request body up to `limit` bytes; beyond it, 413 (and the rest is not read). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > limit) {
    throw new AppError('BCK.HTTP.0413', `request body exceeds ${limit} bytes`);
  }
  // RFC 9112 §6.3: a request with neither Content-Length nor Transfer-Encoding has no body (most GETs): skip
  // the stream machinery (an async iterator per request).
  if (declared === 0 && req.headers['transfer-encoding'] === undefined) return EMPTY;
  // Listeners rather than `for await`: an async iterator per request costs more than the small bodies it reads.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume(); // the rest is discarded, not buffered
        reject(new AppError('BCK.HTTP.0413', `request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onClose = (): void => {
      // The client went away before the end of its body.
      if (!req.complete) onError(new AppError('BCK.HTTP.0400', 'the request body was cut off'));
    };
    function cleanup(): void {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Reads and parses a JSON body; malformed JSON is a 400, never a 500. */
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const body = await readBody(req, limit);
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new AppError('BCK.HTTP.0400', 'request body is not valid JSON');
  }
}
