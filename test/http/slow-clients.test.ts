// Clients that send their request slowly must not hold a connection: a request head must arrive within
// HEADERS_TIMEOUT_MS of connecting (both processes), and a body for the admin process within ADMIN_BODY_TIMEOUT_MS
// of its read (on the admin port, and forwarded by the proxy); else 408 BCK.HTTP.0408 with `Connection: close`, and
// the connection is closed. The stack runs with small limits so each case is quick; nothing here measures time:
// each case waits for the server to close the connection, with a guard far above the limits.
import { connect } from 'node:net';
import test from 'ava';
import { type Stack, startStack } from '../support/stack.js';

const HEADERS_TIMEOUT_MS = 1_000;
const ADMIN_BODY_TIMEOUT_MS = 1_500;
/** Far above every limit: only a connection the server never closes reaches it. */
const GUARD_MS = 60_000;

interface SlowAnswer {
  /** 0 when the server closed without answering. */
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The server closed the connection (FIN or reset), rather than the test's guard. */
  closedByServer: boolean;
}

/**
 * Opens a connection to `origin`, writes `start`, then (if `trickle`) one more byte of `trickle` every 100 ms, never
 * finishing the request; collects what the server answers until it closes the connection.
 */
function slowRequest(origin: string, start: string, trickle?: string): Promise<SlowAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let ticker: NodeJS.Timeout | undefined;
    let closedByServer = true;
    const guard = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, GUARD_MS);
    socket.on('error', () => {}); // writes after the server closed
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => {
      clearTimeout(guard);
      clearInterval(ticker);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = (split < 0 ? '' : raw.slice(0, split)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({
        status: Number(statusLine.split(' ')[1] ?? '0') || 0,
        headers,
        text: split < 0 ? raw : raw.slice(split + 4),
        closedByServer,
      });
    });
    socket.on('connect', () => {
      socket.write(start);
      if (trickle !== undefined) {
        let i = 0;
        ticker = setInterval(() => socket.write(trickle[i++ % trickle.length] ?? 'a'), 100);
      }
    });
  });
}

/** A POST head for the admin's agent creation, declaring a 100-byte JSON body. */
function postHead(origin: string, apiKey?: string): string {
  const { host } = new URL(origin);
  const lines = [
    'POST /api/v1/protocol/agents HTTP/1.1',
    `host: ${host}`,
    'content-type: application/json',
    'content-length: 100',
    ...(apiKey === undefined ? [] : [`authorization: Bearer ${apiKey}`]),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** A 408 with the error envelope and `Connection: close`, after which the server closed the connection. */
function assert408(t: import('ava').ExecutionContext, a: SlowAnswer, params: Record<string, unknown>): void {
  t.true(a.closedByServer, `the server closed the connection (answer: ${a.status} ${a.text.slice(0, 300)})`);
  t.is(a.status, 408, a.text.slice(0, 300));
  t.is(a.headers.connection, 'close');
  t.regex(a.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(a.text) as Record<string, unknown>;
  t.like(body, {
    code: 'BCK.HTTP.0408',
    httpStatus: 408,
    error: 'Request Timeout',
    category: 'validation',
    retryable: true,
    correlationId: a.headers['x-correlation-id'],
  });
  t.deepEqual(JSON.parse(body.params as string), params);
}

let stack: Stack;
let apiKey: string;
/** An admin and a proxy with the small body limit, beside the stack's own, whose admin waits 10 minutes for a
 *  body: a forwarded body cut at the limit is then cut by the proxy itself, not by the admin behind it. */
let admin: { url: string; stop(): Promise<void> };
let proxy: { url: string; stop(): Promise<void> };

test.before(async () => {
  stack = await startStack('sqlite', {
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    ADMIN_BODY_TIMEOUT_MS: '600000',
  });
  const small = { ADMIN_BODY_TIMEOUT_MS: String(ADMIN_BODY_TIMEOUT_MS) };
  [admin, proxy] = await Promise.all([stack.spawn('admin', small), stack.spawn('proxy', small)]);
  apiKey = (await stack.user()).apiKey;
});

test.after.always(async () => {
  await Promise.all([admin?.stop(), proxy?.stop()]);
  await stack?.stop();
});

const bodyParams = { timeoutMs: ADMIN_BODY_TIMEOUT_MS };

for (const via of ['admin', 'proxy'] as const) {
  const origin = () => (via === 'admin' ? admin.url : proxy.url);

  test(`${via}: a request line and no more -> 408 envelope, connection closed`, async (t) => {
    const { host } = new URL(origin());
    assert408(t, await slowRequest(origin(), `GET /api/v1/protocol/agents HTTP/1.1\r\nhost: ${host}\r\n`), {});
  });

  test(`${via}: headers trickling a byte every 100 ms are cut at the header limit -> 408`, async (t) => {
    const { host } = new URL(origin());
    const a = await slowRequest(origin(), `GET /healthz HTTP/1.1\r\nhost: ${host}\r\nx-slow: `, 'abcdefgh');
    assert408(t, a, {});
  });

  test(`${via}: half a request line -> 408`, async (t) => {
    assert408(t, await slowRequest(origin(), 'GET /heal'), {});
  });

  test(`${via}: Content-Length 100, 10 bytes sent, then nothing -> 408 naming the body limit, connection closed`, async (t) => {
    const a = await slowRequest(origin(), `${postHead(origin(), apiKey)}{"name":"x`);
    assert408(t, a, bodyParams);
  });

  test(`${via}: a body trickling a byte every 100 ms is cut at the body limit -> 408`, async (t) => {
    const a = await slowRequest(origin(), `${postHead(origin(), apiKey)}{"name":"`, 'abcdefgh');
    assert408(t, a, bodyParams);
  });

  test(`${via}: a slow body refused before it is read (no credential) -> 401, then the connection is closed`, async (t) => {
    const a = await slowRequest(origin(), `${postHead(origin())}{"name":"x`);
    t.true(a.closedByServer, `the server closed the connection (answer: ${a.status} ${a.text.slice(0, 300)})`);
    t.is(a.status, 401, a.text.slice(0, 300));
    t.like(JSON.parse(a.text), { code: 'BCK.AUTH.0001' });
  });
}

test('a prompt request is still served by every process after the slow ones', async (t) => {
  for (const url of [admin.url, proxy.url, stack.adminUrl, stack.proxyUrl]) {
    const r = await fetch(`${url}/api/v1/protocol/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    t.is(r.status, 400, url);
    t.like(await r.json(), { code: 'BCK.HTTP.0400' });
  }
});
