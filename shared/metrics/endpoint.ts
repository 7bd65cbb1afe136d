// GET /metrics: who may read it, and the answer. Metrics say how much money moves, through which merchants'
// protocols, and how busy the service is: never public by default. Served on a process's own port only with
// METRICS_TOKEN (a bearer token, compared in constant time), on its metrics port (ADMIN_METRICS_PORT /
// PROXY_METRICS_PORT) to whoever reaches that port, and there too the token is required when one is set.
// Framework-free: each process writes the answer (proxy/app.ts, admin/middleware/metrics.ts, listener.ts).
import { secretsEqual } from '../crypto/hashing.js';
import { AppError } from '../errors/app-error.js';
import { METRICS_PATH } from './labels.js';
import { collectors } from './collectors.js';

/** Where /metrics is asked for: `closed`, not served (404 as any unknown path); `open`; `token`, behind a token. */
export type MetricsAccess =
  | { readonly type: 'closed' }
  | { readonly type: 'open' }
  | { readonly type: 'token'; readonly token: string };

/** The main port: only behind the token. */
export function mainPortAccess(token: string | undefined): MetricsAccess {
  return token === undefined ? { type: 'closed' } : { type: 'token', token };
}

/** The metrics port: open unless a token is set. */
export function metricsPortAccess(token: string | undefined): MetricsAccess {
  return token === undefined ? { type: 'open' } : { type: 'token', token };
}

export interface MetricsAnswer {
  readonly status: 200;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

// RFC 6750 §3: a 401 names the scheme it wants. The realm tells it apart from the API's own Bearer challenge.
const CHALLENGE = { 'www-authenticate': 'Bearer realm="metrics"' };
const ALLOWED = new Set(['GET', 'HEAD']);

/** RFC 6750 §2.1 `Bearer <token>`; the scheme is case-insensitive (RFC 9110 §11.1). */
function bearerOf(authorization: string | undefined): string | undefined {
  const m = /^Bearer +([^ ]+) *$/i.exec(authorization ?? '');
  return m?.[1];
}

/**
 * The exposition text, or the AppError to answer: 404 where it is not served, 401 BCK.AUTH.0003 without the right
 * token (the token is checked before the method, so a caller without it learns nothing), 405 for a method other
 * than GET and HEAD.
 */
export async function metricsAnswer(
  access: MetricsAccess,
  method: string | undefined,
  authorization: string | undefined,
): Promise<MetricsAnswer> {
  if (access.type === 'closed')
    throw new AppError('BCK.HTTP.0404', { details: `no route for ${method} ${METRICS_PATH}` });
  if (access.type === 'token') {
    const given = bearerOf(authorization);
    if (given === undefined || !secretsEqual(given, access.token)) {
      throw new AppError('BCK.AUTH.0003', { headers: CHALLENGE });
    }
  }
  if (!ALLOWED.has(method ?? '')) {
    throw new AppError('BCK.HTTP.0405', {
      details: `${method} is not allowed on ${METRICS_PATH}`,
      headers: { allow: 'GET, HEAD' },
    });
  }
  // Never cached: every scrape must read the counters as they are now.
  return {
    status: 200,
    headers: { 'content-type': collectors.contentType, 'cache-control': 'no-store' },
    body: await collectors.metrics(),
  };
}
