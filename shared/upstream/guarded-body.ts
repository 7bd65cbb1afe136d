// The merchant's answer body as we hand it on: the same bytes, cut off with a typed error when the byte cap is
// passed or when undici reports the idle timeout, the total budget, an abort or a trailer section over the header
// limit. Backpressure is kept: when our reader is slow the upstream socket is paused (and a paused socket does not
// count as idle).
import { Readable } from 'node:stream';
import { UpstreamStreamError, outcomeOf } from './outcomes.js';
import { REASON } from './reasons.js';

export function guardBody(source: Readable, opts: { maxBytes: number; maxHeaderBytes: number; onDone: () => void }): Readable {
  let seen = 0;
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    opts.onDone();
  };

  const guarded = new Readable({
    read() {
      source.resume();
    },
    destroy(err, callback) {
      // Our reader went away or a limit was hit: stop reading from the merchant and free the connection.
      if (!source.destroyed) source.destroy();
      finish();
      callback(err);
    },
  });

  source.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > opts.maxBytes) {
      guarded.destroy(new UpstreamStreamError({ type: 'refused', reason: REASON.responseTooLarge }));
      return;
    }
    if (!guarded.push(chunk)) source.pause();
  });
  source.once('end', () => {
    guarded.push(null);
    finish();
  });
  source.on('error', (err) => {
    guarded.destroy(new UpstreamStreamError(outcomeOf(err, opts)));
  });
  return guarded;
}

/** Reads a guarded body to the end. Rejects with the UpstreamStreamError the body emitted. */
export async function collectBody(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
