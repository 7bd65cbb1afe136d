// How an outbound call can end without a usable answer, and the one function that turns any thrown value into
// such an outcome. Nothing from an exception (message, stack, internal address) reaches the caller: the reasons
// are ours (reasons.ts) or the policy's own text.
import { errors } from 'undici';
import type { UpstreamLimits } from './limits.js';
import { type FailureReason, REASON, headersTooLarge } from './reasons.js';

/** Policy said no: nothing was sent (or, for an answer over a byte or header limit, nothing more is read). Maps to 400. */
export type Refused = { type: 'refused'; reason: string };
/** The merchant could not be reached or did not answer in time. A retry may help. */
export type Failed = { type: 'failed'; reason: FailureReason };

/**
 * A refusal raised inside undici's connect step (resolved address not allowed). Its `code` is deliberately not
 * UND_ERR_SOCKET / UND_ERR_INFO: undici retries connecting on those, and a refusal must fail the request at once.
 */
export class UpstreamRefusedError extends Error {
  readonly code = 'PAYROUTE_UPSTREAM_REFUSED';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UpstreamRefusedError';
  }
}

/** A failure we detect ourselves (lookup failed or timed out, total budget spent, caller aborted). */
export class UpstreamFailedError extends Error {
  readonly code = 'PAYROUTE_UPSTREAM_FAILED';
  constructor(readonly reason: FailureReason) {
    super(reason);
    this.name = 'UpstreamFailedError';
  }
}

/** What a streamed answer body emits as 'error' when a limit is hit mid-body; `outcome` says which. */
export class UpstreamStreamError extends Error {
  constructor(readonly outcome: Refused | Failed) {
    super(outcome.reason);
    this.name = 'UpstreamStreamError';
  }
}

/** The `code` of a thrown value (Node and undici errors carry one), or ''. */
export function codeOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return '';
}

const FAILURE_BY_CODE: Readonly<Record<string, FailureReason>> = {
  UND_ERR_CONNECT_TIMEOUT: REASON.connectTimeout,
  ETIMEDOUT: REASON.connectTimeout,
  UND_ERR_HEADERS_TIMEOUT: REASON.headersTimeout,
  UND_ERR_BODY_TIMEOUT: REASON.idleTimeout,
  ECONNREFUSED: REASON.connectionRefused,
  ENETUNREACH: REASON.connectionRefused,
  EHOSTUNREACH: REASON.connectionRefused,
  ECONNRESET: REASON.connectionReset,
  EPIPE: REASON.connectionReset,
  UND_ERR_SOCKET: REASON.connectionReset,
  UND_ERR_CLOSED: REASON.connectionReset,
  UND_ERR_DESTROYED: REASON.connectionReset,
  ENOTFOUND: REASON.nameResolution,
  EAI_AGAIN: REASON.nameResolution,
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: REASON.invalidResponse,
  UND_ERR_ABORTED: REASON.aborted,
  UND_ERR_ABORT: REASON.aborted,
  ABORT_ERR: REASON.aborted,
};

/** Any thrown value as an outcome. Never throws. `limits` are the ones the call ran under, named in refusals. */
export function outcomeOf(err: unknown, limits: Pick<UpstreamLimits, 'maxHeaderBytes'>): Refused | Failed {
  if (err instanceof UpstreamStreamError) return err.outcome;
  if (err instanceof UpstreamRefusedError) return { type: 'refused', reason: err.reason };
  if (err instanceof UpstreamFailedError) return { type: 'failed', reason: err.reason };
  const code = codeOf(err);
  // Raised before anything is sent: a method, header or body undici will not put on the wire.
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
    return { type: 'refused', reason: 'the request cannot be sent upstream (invalid method, header or body)' };
  }
  // undici's answer to a header (or trailer) section over maxHeaderSize, raised while parsing (observed with
  // undici 7: the request rejects, or the body errors for trailers). The merchant will send the same headers
  // again, so this refuses its answer (400) rather than reporting a retryable gateway failure (502).
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return { type: 'refused', reason: headersTooLarge(limits.maxHeaderBytes) };
  const known = FAILURE_BY_CODE[code];
  if (known !== undefined) return { type: 'failed', reason: known };
  // A framing llhttp cannot parse (e.g. Content-Length beside Transfer-Encoding, RFC 9112 §6.3) sometimes comes
  // without an HPE_* code: a malformed answer all the same, not an unknown failure.
  if (code.startsWith('HPE_') || err instanceof errors.HTTPParserError)
    return { type: 'failed', reason: REASON.invalidResponse };
  if (/^(ERR_TLS|ERR_SSL|EPROTO)|CERT|UNABLE_TO_|SELF_SIGNED/.test(code))
    return { type: 'failed', reason: REASON.tlsFailed };
  return { type: 'failed', reason: REASON.other };
}
