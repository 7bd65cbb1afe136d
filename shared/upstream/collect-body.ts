import type { Readable } from 'node:stream';

/** Reads an answer body (exchange.ts) to the end. Rejects with the UpstreamStreamError the body emitted. */
export async function collectBody(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
