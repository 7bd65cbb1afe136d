// One outbound exchange, driven through undici's dispatch handler interface rather than its `request()` API.
// request() wraps every call in an AsyncResource, an abort-signal listener and a body stream of its own, which we
// then wrapped again to count bytes: on the free relay that was two Readables, an AbortController, a timer race
// and a promise race per request. Here one object is all of it: the handler undici calls, the total-time budget,
// the byte cap and the single Readable the merchant's body is handed on through (the same bytes, cut off with a
// typed UpstreamStreamError when a cap or a timeout is hit). Backpressure is kept: when our reader is slow the
// handler tells undici to pause the socket (and a paused socket does not count as idle).
import { Readable } from 'node:stream';
import { type Dispatcher, util } from 'undici';
import { type OutgoingHeaders, foreignTransferCoding, frameNoContent, scrubResponseHeaders } from './headers.js';
import { type Failed, type Refused, UpstreamFailedError, UpstreamStreamError, codeOf, outcomeOf } from './outcomes.js';
import { REASON } from './reasons.js';

export type ExchangeResult =
  | { type: 'response'; status: number; headers: OutgoingHeaders; body: Readable }
  | Refused
  | Failed;

export interface ExchangeLimits {
  /** Largest body handed on; a larger declared length is refused before any of it is read. */
  maxBytes: number;
  /** Named in the refusal of an oversized header or trailer section (undici enforces the size itself). */
  maxHeaderBytes: number;
  /** The whole exchange, body included. */
  maxTotalMs: number;
  /** A HEAD answer declares the length of a body it does not carry (RFC 9110 §9.3.2). */
  isHead: boolean;
}

/** The merchant's answer body as we hand it on. Reading asks undici for more; destroying it ends the exchange. */
class AnswerBody extends Readable {
  constructor(private readonly exchange: Exchange) {
    super();
    // A cap can be hit in the same turn the answer is delivered, before its reader attached a listener: the
    // error must reach the reader (its own listener or iterator), never crash the process as an unhandled one.
    this.on('error', ignore);
  }

  override _read(): void {
    this.exchange.resumeSource();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Our reader went away or a limit was hit: stop reading from the merchant and free the connection.
    this.exchange.stop();
    callback(err);
  }
}

function ignore(): void {}

const stopped = (): UpstreamFailedError => new UpstreamFailedError(REASON.aborted);

/**
 * A dispatch handler (undici's onConnect / onHeaders / onData / onComplete / onError interface, the one its
 * own request() implements) that settles `result` once: with the answer when the status line and headers are in,
 * or with the outcome if the exchange ends before that. Never throws.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly result: Promise<ExchangeResult>;
  /** Resolves `result`; a promise settles once, so later calls are no-ops. */
  #settle!: (r: ExchangeResult) => void;
  /** Set once the exchange is over, normally or not: later calls from undici or from timers are ignored. */
  #ended = false;
  /** Why we ended it early, kept for an onConnect that comes after (the request was still queued). */
  #reason: Error | undefined;
  #abort: ((err?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #body: AnswerBody | undefined;
  #seen = 0;
  /** The answer has no body whatever its Content-Length says: HEAD, 204, 304 (RFC 9110 §6.4.1, RFC 9112 §6.3). */
  #bodiless = false;
  readonly #timer: NodeJS.Timeout;
  readonly #signal: AbortSignal | undefined;
  readonly #onSignal: (() => void) | undefined;

  constructor(
    private readonly limits: ExchangeLimits,
    signal?: AbortSignal,
  ) {
    this.result = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#timer = setTimeout(() => this.#end(new UpstreamFailedError(REASON.totalTimeout)), limits.maxTotalMs);
    if (signal !== undefined) {
      this.#signal = signal;
      this.#onSignal = () => this.#end(stopped());
      signal.addEventListener('abort', this.#onSignal, { once: true });
    }
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.#reason !== undefined) abort(this.#reason);
    else this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (this.#ended) return false;
    // Interim answers (RFC 9110 §15.2) are not relayed; the final one follows on the same exchange.
    if (statusCode < 200) return true;
    this.#resume = resume;
    const headers = util.parseHeaders(rawHeaders) as Record<string, string | string[]>;
    const declared = Number(headers['content-length']);
    // A 304's Content-Length is the size of the representation it stands for, not of a body.
    this.#bodiless = this.limits.isHead || statusCode === 204 || statusCode === 304;
    const resetContent = statusCode === 205;
    if (!this.#bodiless && !resetContent) {
      // undici removes chunked framing and nothing else: any other transfer coding would be handed on undecoded,
      // its header dropped (hop-by-hop). Refused like the malformed framings undici refuses itself (a repeated
      // Content-Length: UND_ERR_RES_CONTENT_LENGTH_MISMATCH, "invalid upstream response").
      if (foreignTransferCoding(headers['transfer-encoding'])) {
        this.#end(new UpstreamFailedError(REASON.invalidResponse));
        return false;
      }
      if (Number.isFinite(declared) && declared > this.limits.maxBytes) {
        this.#end(new UpstreamStreamError({ type: 'refused', reason: REASON.responseTooLarge }));
        return false;
      }
    }
    const body = new AnswerBody(this);
    this.#body = body;
    this.#settle({
      type: 'response',
      status: statusCode,
      headers: frameNoContent(statusCode, scrubResponseHeaders(headers)),
      body,
    });
    if (resetContent) this.#resetContent(declared === 0);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const body = this.#body;
    if (this.#ended || body === undefined) return false;
    this.#seen += chunk.length;
    if (this.#seen > this.limits.maxBytes) {
      this.#end(new UpstreamStreamError({ type: 'refused', reason: REASON.responseTooLarge }));
      return false;
    }
    return body.push(chunk);
  }

  onComplete(): void {
    if (this.#ended) return;
    this.#finish();
    this.#body?.push(null);
  }

  onError(err: Error): void {
    // undici holds a 304 (or 204) with a Content-Length to that length and reports the missing bytes: there are
    // none to wait for, so the answer is complete.
    if (this.#bodiless && this.#body !== undefined && codeOf(err) === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
      this.onComplete();
      return;
    }
    this.#end(err);
  }

  /** Our reader wants more: undici resumes a socket it paused because push() said stop. */
  resumeSource(): void {
    this.#resume?.();
  }

  /** The body was destroyed by its reader (or by us): end the exchange and free the connection. */
  stop(): void {
    // Also called when a fully read body is destroyed: no error object (and its stack trace) is made then.
    if (!this.#ended) this.#end(stopped());
  }

  /**
   * A 205 is complete at its headers: it carries no content (RFC 9110 §15.3.6), whatever it declares, and its body
   * is handed on empty. Whatever the merchant sends after them is not read: undici would wait for a declared length
   * (or for the connection's end) that a well-behaved 205 never sends. With `Content-Length: 0` there is nothing
   * to read and undici finishes the exchange (the connection is kept); otherwise it is aborted and the connection
   * closed, since its unread bytes would be taken for the next answer.
   */
  #resetContent(empty: boolean): void {
    this.#finish();
    this.#body?.push(null);
    if (!empty) this.#abort?.(stopped());
  }

  #finish(): void {
    this.#ended = true;
    clearTimeout(this.#timer);
    if (this.#onSignal !== undefined) this.#signal?.removeEventListener('abort', this.#onSignal);
  }

  /** Ends the exchange early with `err`: as the result if no answer was delivered yet, else as the body's error. */
  #end(err: Error): void {
    if (this.#ended) return;
    this.#finish();
    const outcome = outcomeOf(err, this.limits);
    const body = this.#body;
    if (body === undefined) this.#settle(outcome);
    else if (!body.destroyed) body.destroy(new UpstreamStreamError(outcome));
    // Tell undici, unless the error is its own: a request still queued is aborted when it gets a connection.
    if (this.#abort !== undefined) this.#abort(err);
    else this.#reason = err;
  }
}
