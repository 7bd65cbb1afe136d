// The streaming proxy's answer to its caller: a merchant's streamed body relayed over node:http (the relay of
// NodeCallerChannel, caller-channel.ts).
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from '../../shared/errors/app-error.js';
import type { UpstreamStreamResult } from '../../shared/upstream/index.js';
import { writeHead } from '../respond.js';

/**
 * Relays a merchant's streamed answer to our caller. Resolves true when the whole body reached the caller, false
 * when it broke off after the status line was sent (the merchant failed, a cap or stall cut it, the caller left).
 * Throws the 502 (naming the payment, if `extra` carries one) when the answer broke off before anything was sent.
 */
export async function relay(
  res: ServerResponse,
  r: Extract<UpstreamStreamResult, { type: 'response' }>,
  extra?: Record<string, string>,
): Promise<boolean> {
  // The body is relayed byte for byte (the outbound module asks for no content coding and decodes nothing), so the
  // merchant's content-length stays true; keeping it saves a chunked re-framing per answer. A body cut by a cap or
  // a stall ends in a destroyed connection, which a declared length makes detectable to the client.
  const { body } = r;
  // Node sends the status line with the first body write, not at writeHead(): once writeHead() is called, a body
  // that fails before its first byte can only end in a destroyed connection, and our caller would get no status
  // and no X-Router-Payment-Id. So the head waits for the body's first event. Usually the first bytes came in with
  // the headers and are buffered already: no wait, no listener. A merchant that sends its headers and then stalls
  // is bounded by the outbound idle and total timeouts, which fail the body: a 502 too.
  if (body.readableLength === 0 && !body.destroyed && !body.readableEnded && !res.destroyed)
    await firstEvent(body, res);
  // Our caller left while the answer was on its way (or it was paid for): nothing to write to, nothing to wait for.
  if (res.destroyed) {
    body.destroy();
    return false;
  }
  // The answer broke off before we began relaying it (during the payment's bookkeeping, or before its first byte):
  // pipe() would wait for ever on a stream that already failed. Nothing is written yet: the merchant's failure, a
  // 502 (README: anything failing on the paid call is a 502 naming the paymentId).
  if (body.readableAborted) {
    const paymentId = extra?.['x-router-payment-id'];
    const ids = paymentId === undefined ? {} : { paymentId };
    throw new AppError('BCK.HTTP.0502', { details: "the merchant's answer broke off", params: ids, extra: ids });
  }
  writeHead(res, r.status, extra === undefined ? r.headers : { ...r.headers, ...extra });
  // pipe() rather than stream.pipeline(): pipeline builds an AbortController (and a DOMException) per request,
  // about 10% of the proxy's CPU on the free relay (BENCHMARKS.md).
  // The listeners are passed inline: a named closure per request would also cost a tsx keepNames call each.
  return new Promise<boolean>((resolve) => {
    body.once('error', () => {
      body.destroy();
      res.destroy();
      resolve(false);
    });
    res.once('close', () => {
      if (!res.writableFinished) body.destroy(); // our client went away
      resolve(res.writableFinished);
    });
    body.pipe(res);
  });
}

/**
 * One relay waiting for the merchant's first byte (see relay()): what the listeners below need to end the wait.
 * Module functions that find it here, not closures made per request (the read-body.ts pattern): a named closure
 * costs a tsx keepNames call each, on the hot path of the free relay.
 */
class FirstEvent {
  constructor(
    readonly body: Readable,
    readonly res: ServerResponse,
    readonly resolve: () => void,
  ) {}
}

const waiting = new WeakMap<Readable | ServerResponse, FirstEvent>();

/** Ends the wait of the relay `key` (its body or its response) belongs to: every listener off, then resolves. */
function endWait(key: Readable | ServerResponse): void {
  const wait = waiting.get(key);
  if (wait === undefined) return;
  const { body, res } = wait;
  waiting.delete(body);
  waiting.delete(res);
  body.off('readable', onFirstEvent);
  body.off('end', onFirstEvent);
  body.off('error', onFirstEvent);
  body.off('close', onFirstEvent);
  res.off('close', onFirstEvent);
  wait.resolve();
}

function onFirstEvent(this: Readable | ServerResponse): void {
  endWait(this);
}

/**
 * Resolves at the first of: some of the body is readable, it ended empty, it failed (or was destroyed), or our
 * caller left. The caller reads which from the streams' state (readableAborted, destroyed) afterwards.
 */
function firstEvent(body: Readable, res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const wait = new FirstEvent(body, res, resolve);
    waiting.set(body, wait);
    waiting.set(res, wait);
    body.on('readable', onFirstEvent);
    body.on('end', onFirstEvent);
    body.on('error', onFirstEvent);
    body.on('close', onFirstEvent);
    res.on('close', onFirstEvent);
  });
}
