// The one outbound-HTTP client of the project. Everything that calls a
// merchant on a user's behalf goes through an Upstream: URL policy, method policy and header hygiene before
// anything is sent; address checks at connect time (guarded-connect.ts); redirects never followed (undici's
// dispatch has no redirect handling unless an interceptor is added, and none is); timeouts and byte caps.
// Results are discriminated unions: callers switch on `type`, nothing throws.
import type { Readable } from 'node:stream';
import { Agent } from 'undici';
import { timedUpstream } from '../metrics/upstream.js';
import { createGuardedConnector } from './guarded-connect.js';
import { collectBody } from './collect-body.js';
import { Exchange } from './exchange.js';
import { type IncomingHeaders, type OutgoingHeaders, type CredentialHeader, scrubRequestHeaders } from './headers.js';
import { type UpstreamLimitsInput, parseLimits } from './limits.js';
import { checkMethod } from './method-policy.js';
import { type Failed, type Refused, outcomeOf } from './outcomes.js';
import { REASON } from './reasons.js';
import { type Resolver, systemResolver } from './resolver.js';
import { targetRoute } from './url-policy.js';

export type UpstreamOptions = UpstreamLimitsInput & {
  /**
   * ROUTER_ALLOW_PRIVATE_TARGETS: process-wide, the only way to reach loopback and private addresses. Cloud
   * metadata and link-local addresses (169.254.0.0/16, fe80::/10, fd00:ec2::/32, ...) stay refused even then.
   */
  allowPrivate: boolean;
  /** Name resolution; the system resolver by default. Tests inject one to map names to private addresses. */
  resolver?: Resolver | undefined;
  /** Extra trusted CA certificates (PEM) for https merchants, e.g. a private CA; the system store otherwise. */
  ca?: string | readonly string[] | undefined;
};

export interface UpstreamRequest {
  /** The caller's target URL, checked by url-policy.ts. */
  url: string;
  /** Default GET. */
  method?: string | undefined;
  /** The caller's headers, untrusted: scrubbed by headers.ts before anything is sent. */
  headers?: IncomingHeaders | undefined;
  body?: Uint8Array | string | undefined;
  /** Sent as `Authorization` (X-Router-Upstream-Authorization); dropped if it uses the Payment scheme. */
  upstreamAuthorization?: string | undefined;
  /** The router's own payment credential for a paid re-send. */
  credential?: CredentialHeader | undefined;
  /** A smaller byte cap for this call than the upstream's (e.g. reading a 402 body). */
  maxBodyBytes?: number | undefined;
  /** Abort the call (e.g. our own client went away). */
  signal?: AbortSignal | undefined;
}

export type UpstreamResponse<B> = { type: 'response'; status: number; headers: OutgoingHeaders; body: B };
/** Buffered: the whole body, at most maxBodyBytes (else refused 'response too large'). */
export type UpstreamResult = UpstreamResponse<Buffer> | Refused | Failed;
/** Streamed: the body emits UpstreamStreamError ('error') if a cap or timeout is hit mid-body. */
export type UpstreamStreamResult = UpstreamResponse<Readable> | Refused | Failed;

export interface Upstream {
  readonly allowPrivate: boolean;
  request(req: UpstreamRequest): Promise<UpstreamResult>;
  stream(req: UpstreamRequest): Promise<UpstreamStreamResult>;
  /** Closes pooled connections once in-flight calls end. */
  close(): Promise<void>;
}

/** Keep-alive: idle pooled sockets are closed after this, earlier if the merchant's Keep-Alive hint says so. */
const KEEP_ALIVE_MS = 4_000;

export function createUpstream(opts: UpstreamOptions): Upstream {
  const limits = parseLimits(opts);
  const allowPrivate = opts.allowPrivate === true;
  const agent = new Agent({
    connect: createGuardedConnector({
      resolver: opts.resolver ?? systemResolver,
      allowPrivate,
      connectTimeoutMs: limits.connectTimeoutMs,
      ca: opts.ca,
    }),
    keepAliveTimeout: KEEP_ALIVE_MS,
    headersTimeout: limits.headersTimeoutMs,
    bodyTimeout: limits.bodyTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
  });

  async function stream(req: UpstreamRequest): Promise<UpstreamStreamResult> {
    const target = targetRoute(req.url, { allowPrivate });
    if (!target.ok) return { type: 'refused', reason: target.reason };
    const method = checkMethod(req.method ?? 'GET');
    if (!method.ok) return { type: 'refused', reason: method.reason };
    const headers = scrubRequestHeaders(req.headers ?? {}, {
      upstreamAuthorization: req.upstreamAuthorization,
      credential: req.credential,
    });
    if (!headers.ok) return { type: 'refused', reason: headers.reason };
    const maxBytes = Math.min(req.maxBodyBytes ?? limits.maxBodyBytes, limits.maxBodyBytes);
    if (req.signal?.aborted) return { type: 'failed', reason: REASON.aborted };

    // One handler object is the whole exchange: total budget, caller's signal, byte cap and the body (exchange.ts).
    const exchange = new Exchange(
      {
        maxBytes,
        maxHeaderBytes: limits.maxHeaderBytes,
        maxTotalMs: limits.maxTotalMs,
        isHead: method.method.toUpperCase() === 'HEAD',
      },
      req.signal,
    );
    agent.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: method.method,
        headers: headers.headers,
        body: req.body ?? null,
        headersTimeout: limits.headersTimeoutMs,
        bodyTimeout: limits.bodyTimeoutMs,
      },
      exchange,
    );
    return timedUpstream(exchange.result);
  }

  async function request(req: UpstreamRequest): Promise<UpstreamResult> {
    const result = await stream(req);
    if (result.type !== 'response') return result;
    try {
      return { ...result, body: await collectBody(result.body) };
    } catch (err) {
      return outcomeOf(err, limits);
    }
  }

  return {
    allowPrivate,
    request,
    stream,
    close: () => agent.close(),
  };
}
