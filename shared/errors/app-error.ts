import { randomUUID } from 'node:crypto';
import { type ErrorCode, catalogue } from './catalogue.js';
import { isDatabaseUnavailable } from './database-unavailable.js';

/** Fields of the error envelope (the error envelope every 4xx/5xx carries, README "Errors"). */
export interface ErrorEnvelope {
  code: string;
  httpStatus: number;
  message: string;
  details: string;
  error: string;
  hint: string;
  docsUrl: string;
  category: string;
  retryable: boolean;
  correlationId: string;
  uuid: string;
  date: string;
  params: string;
  [extra: string]: unknown;
}

/** What an AppError carries besides its code; every field optional. */
export interface AppErrorOptions {
  /** Safe to show the caller; the catalogue's message when absent. */
  readonly details?: string;
  /** Serialized into the envelope's `params` (the values the message refers to). */
  readonly params?: Record<string, unknown>;
  /** Extra top-level fields of the envelope (e.g. the original paymentId of a duplicate). */
  readonly extra?: Record<string, unknown>;
  /** Response headers the answer must carry (e.g. a 401's WWW-Authenticate challenge); both catch points set them. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The underlying failure, for logs only (never on the wire). */
  readonly cause?: unknown;
}

/**
 * The one error class services throw. `details` is safe to show; anything that is not an AppError is
 * turned into BCK.HTTP.0500 by the catch points and never reaches the wire.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: string;
  readonly params: Record<string, unknown>;
  readonly extra: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const details = options.details ?? catalogue[code].message;
    super(details, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.params = options.params ?? {};
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  get httpStatus(): number {
    return catalogue[this.code].httpStatus;
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function toEnvelope(err: AppError, correlationId: string, docsBase: string): ErrorEnvelope {
  const def = catalogue[err.code];
  return {
    ...err.extra,
    code: err.code,
    httpStatus: def.httpStatus,
    message: def.message,
    details: err.details,
    error: REASONS[def.httpStatus] ?? 'Error',
    hint: def.hint,
    docsUrl: `${docsBase}#${err.code.toLowerCase().replaceAll('.', '')}`,
    category: def.category,
    retryable: def.retryable,
    correlationId,
    uuid: randomUUID(),
    date: new Date().toISOString(),
    params: JSON.stringify(err.params),
  };
}

/** Seconds a client is told to wait after the database failed it: about as long as a pooled connection takes to reopen. */
export const DATABASE_RETRY_AFTER_SECS = 2;

/**
 * Anything thrown maps to an AppError: the database being unreachable or timing out is 503 BCK.DATABASE.0001 with
 * Retry-After (the request may succeed later); anything else unknown is a generic 500 (internals never leak).
 */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) {
    return new AppError('BCK.DATABASE.0001', {
      headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECS) },
      cause: err,
    });
  }
  return new AppError('BCK.HTTP.0500', { cause: err });
}
