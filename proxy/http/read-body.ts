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
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new AppError('BCK.HTTP.0413', `request body exceeds ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
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
