// Fixed reasons of outbound results, in one place so callers and tests compare against names, not strings
// scattered through the code. Policy refusals carry their own specific text (which address, which rule); these
// are the reasons that do not depend on the target. All are safe to show to the caller: none names an internal
// address or an exception message.
export const REASON = {
  /** The answer's declared or actual size passed the byte cap (a refusal: sending it again will not help). */
  responseTooLarge: 'response too large',
  /** DNS lookup failed or answered nothing usable. */
  nameResolution: 'name resolution failed',
  /** No TCP (and TLS) connection within the connect timeout, DNS lookup included. */
  connectTimeout: 'connect timeout',
  /** Connected, but the status line and headers did not arrive within the headers timeout. */
  headersTimeout: 'headers timeout',
  /** The body stalled: no bytes for longer than the idle timeout. */
  idleTimeout: 'idle timeout',
  /** The whole exchange took longer than the total budget. */
  totalTimeout: 'total timeout',
  connectionRefused: 'connection refused',
  connectionReset: 'connection closed by the upstream',
  tlsFailed: 'TLS handshake or certificate verification failed',
  invalidResponse: 'invalid upstream response',
  /** The caller (e.g. its client went away) aborted the call. */
  aborted: 'aborted',
  other: 'upstream request failed',
} as const;

export type FailureReason = (typeof REASON)[keyof typeof REASON];

/**
 * The answer's header (or trailer) section passed the client's header limit. A refusal of the merchant's answer,
 * like an oversized body: the same request gets the same answer, so it is not a gateway failure. The limit is
 * named so the caller can tell the merchant what to fix.
 */
export function headersTooLarge(maxHeaderBytes: number): string {
  return `the merchant's response headers exceed ${maxHeaderBytes} bytes`;
}
