// The load loops and the router calls of the load scenarios, shared by the benchmark (loadtest/bench-router.ts) and
// the load-test kit (loadtest/run.ts): the same requests as loadtest/k6/*.ts, each answer checked as the k6 checks
// do, every call reported to a Sink.
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import type { Pool } from 'undici';
import type { Sink } from './stats.js';

/** Bounds of a loop besides its time: a count, and a signal that ends it early (Ctrl-C). */
export interface Limits {
  readonly maxCount?: number;
  readonly signal?: AbortSignal;
}

/**
 * A closed loop: `concurrency` workers each call `once` back to back until the deadline (or `maxCount` calls, or the
 * signal). A call that throws is a failure, its message the error. Returns the seconds it ran.
 */
export async function closedLoop(
  seconds: number,
  concurrency: number,
  once: () => Promise<void>,
  sink: Sink,
  limits: Limits = {},
): Promise<number> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const maxCount = limits.maxCount ?? 10_000_000;
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline && issued < maxCount && limits.signal?.aborted !== true) {
      issued += 1;
      const t0 = performance.now();
      try {
        await once();
        sink.ok(performance.now() - t0);
      } catch (err) {
        sink.fail(String(err instanceof Error ? err.message : err).slice(0, 500));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return (performance.now() - started) / 1000;
}

/**
 * One autocannon run, stopped after `seconds` (or `amount` requests, or the signal, whichever first). With a sink,
 * every answer is reported: a 2xx as a success, anything else (a status, a connection error, a timeout) as a failure.
 */
export async function cannon(
  url: string,
  requests: AutocannonRequest[],
  o: { seconds: number; connections: number; amount?: number; sink?: Sink; signal?: AbortSignal },
): Promise<AutocannonResult> {
  const opts = { url, connections: o.connections, pipelining: 1, timeout: 10, idReplacement: true, requests };
  const instance =
    o.amount === undefined ? autocannon({ ...opts, duration: o.seconds }) : autocannon({ ...opts, amount: o.amount });
  const sink = o.sink;
  if (sink !== undefined) {
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) sink.ok(ms);
      else sink.fail(`HTTP ${status}`);
    });
    instance.on('reqError', (err) => sink.fail(err.message));
  }
  const cap = setTimeout(() => instance.stop(), o.seconds * 1000 + 50);
  const stop = () => instance.stop();
  o.signal?.addEventListener('abort', stop, { once: true });
  try {
    return await instance;
  } finally {
    clearTimeout(cap);
    o.signal?.removeEventListener('abort', stop);
  }
}

/**
 * The relay requests of loadtest/k6/relay.ts: GET and a small JSON POST through ALL /api/v1/router/proxy to the free
 * upstream, each with a fresh X-Router-Request-Id (autocannon's `[<id>]`).
 */
export function relayRequests(apiKey: string, delegationId: string, upstreamUrl: string): AutocannonRequest[] {
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'x-router-target-url': `${upstreamUrl}/free`,
    'x-router-delegation-id': delegationId,
    'x-router-request-id': 'bench-[<id>]',
  };
  const body = JSON.stringify({ question: 'what is the answer?', n: 42 });
  return [
    { method: 'GET', path: '/api/v1/router/proxy', headers },
    { method: 'POST', path: '/api/v1/router/proxy', headers: { ...headers, 'content-type': 'application/json' }, body },
  ];
}

/**
 * One call of a router route (/router/route, /router/commerce/route) that must answer 200 with the upstream's 200
 * relayed: paid and `Settled` (the merchant's receipt) when `paid`, unpaid otherwise. Throws on anything else.
 */
export async function routeCall(
  pool: Pool,
  o: { path: string; bearer: string; body: Record<string, string>; paid: boolean },
): Promise<void> {
  const res = await pool.request({
    path: o.path,
    method: 'POST',
    headers: { authorization: `Bearer ${o.bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(o.body),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${o.path} ${res.statusCode}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { status: number; paid: boolean; payment?: { status: string } };
  const expected = o.paid ? body.paid && body.payment?.status === 'Settled' : !body.paid;
  if (body.status !== 200 || !expected) throw new Error(`${o.path} answered ${text.slice(0, 300)}`);
}

/** An MCP session on the proxy's /mcp for `token` (initialize): the headers every later request carries. */
export async function mcpSession(pool: Pool, token: string): Promise<Record<string, string>> {
  const res = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: mcpHeaders(token, {}),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  const text = await res.body.text();
  const session = res.headers['mcp-session-id'];
  if (res.statusCode !== 200 || typeof session !== 'string')
    throw new Error(`mcp initialize ${res.statusCode}: ${text}`);
  return { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
}

const mcpHeaders = (token: string, session: Record<string, string>) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...session,
});

/**
 * One call_service tool call through /mcp that must answer a result relaying the upstream's 200: paid and `Settled`
 * when `paid`, unpaid otherwise (the tool gives each call a fresh requestId). Throws on anything else.
 */
export async function mcpCallService(
  pool: Pool,
  o: { token: string; session: Record<string, string>; url: string; paid: boolean; id: number },
): Promise<void> {
  const res = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: mcpHeaders(o.token, o.session),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: o.id,
      method: 'tools/call',
      params: { name: 'call_service', arguments: { url: o.url, method: 'GET' } },
    }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`/mcp ${res.statusCode}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as {
    result?: { isError?: boolean; structuredContent?: { status: number; paid: boolean; payment?: { status: string } } };
  };
  const r = body.result?.structuredContent;
  const expected = o.paid ? r?.paid === true && r.payment?.status === 'Settled' : r?.paid === false;
  if (body.result?.isError === true || r?.status !== 200 || !expected)
    throw new Error(`/mcp answered ${text.slice(0, 300)}`);
}

/**
 * The target of a mode A mint: the merchant's own 402 (its PAYMENT-REQUIRED header, x402 v2), as an agent would
 * pass it on.
 */
export async function mintTarget(merchantUrl: string): Promise<Record<string, unknown>> {
  const probe = await fetch(`${merchantUrl}/paid`);
  await probe.arrayBuffer();
  const requiredHeader = probe.headers.get('payment-required');
  if (probe.status !== 402 || requiredHeader === null) throw new Error(`merchant did not answer 402 (${probe.status})`);
  const required = JSON.parse(Buffer.from(requiredHeader, 'base64').toString('utf8')) as Record<string, unknown>;
  return { x402Version: 2, accepts: required.accepts, resource: required.resource, extensions: required.extensions };
}

/** One mode A mint (POST /api/v1/router/payments) that must answer 200 with a credential. Throws on anything else. */
export async function mintCall(
  pool: Pool,
  o: { apiKey: string; delegationId: string; target: Record<string, unknown>; requestId: string },
): Promise<void> {
  const res = await pool.request({
    path: '/api/v1/router/payments',
    method: 'POST',
    headers: { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ delegationId: o.delegationId, protocol: 'x402', target: o.target, requestId: o.requestId }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`mint ${res.statusCode}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { credential?: { value?: string } };
  if (typeof body.credential?.value !== 'string') throw new Error(`mint answered ${text.slice(0, 300)}`);
}
