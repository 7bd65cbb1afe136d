// The port between the streaming proxy's service (stream.ts) and the HTTP server it runs in: what the service
// needs from its caller's connection, and nothing of how it is done. The proxy implements it over node:http
// (proxy/http/caller-channel.ts); shared/ never sees a request or a response object.
import type { UpstreamStreamResult } from '../upstream/index.js';

/** A merchant's answer whose head has arrived; its body is still streaming. */
export type StreamedAnswer = Extract<UpstreamStreamResult, { type: 'response' }>;

/** The caller's side of one streaming call. */
export interface CallerChannel {
  /**
   * The caller's request body, whole (a paid call re-sends it). Past the size or time limit it rejects with the
   * AppError the caller gets (413 BCK.HTTP.0413, 408 BCK.HTTP.0408), the connection then closed by the channel.
   */
  readBody(): Promise<Buffer>;
  /** True once the caller went away: nothing is paid for an answer nobody will receive. */
  left(): boolean;
  /**
   * Relays the merchant's answer, its status, its headers and `extra` (ours, X-Router-Payment-*), then its body as
   * it streams. Resolves true when the whole body reached the caller, false when it broke off after the status
   * line was sent (the merchant failed, a cap or a stall cut it, the caller left). Rejects with a 502 (naming the
   * payment, if `extra` names one) when the answer broke off before anything was sent.
   */
  relay(answer: StreamedAnswer, extra?: Record<string, string>): Promise<boolean>;
  /** The payment this call made, told as soon as it exists (the request log names it, even if the relay fails). */
  paid(paymentId: string): void;
}
