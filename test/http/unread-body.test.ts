// A request refused before its body was read (413 oversize, 415, 401 / 403 decided before the body, 404 / 405 with
// a body) must not leave the connection stuck behind the unread rest of that body: the answer either closes the
// connection (saying `connection: close`, then lingering so the answer arrives) or the body is read and dropped and
// the next request on the connection is answered. Never silence. (The defect: the consent and sign-in pages answered
// an oversize form 413 through their own catch point and kept the connection, whose next request then waited for
// ever behind the paused rest of the body; and a body forwarded by the proxy, refused early by the admin process,
// could stall the client's connection now and then.) The hang was intermittent, so each case runs TRIALS times on
// each port; every wait is bounded. The stack is SQLite only: no case reads or writes data.
import { connect } from 'node:net';
import test from 'ava';
import { DRAIN_MAX_BYTES, unreadBodyOf } from '../../shared/unread-body.js';
import { type NextOutcome, keepAliveHead, requestThenNext } from '../support/raw-http-client.js';
import { type Stack, startStack } from '../support/stack.js';

/** UNREAD_BODY_TRIALS=N for more (an intermittent hang shows in some trials only). */
const TRIALS = Number(process.env.UNREAD_BODY_TRIALS ?? 20);
/** Far above what an answer takes on a loaded machine: only a connection left hanging reaches it. */
const WAIT_MS = 20_000;
const LIMIT = 1_048_576;
/** 1.15 MB, past BODY_LIMIT_BYTES (and ROUTER_MAX_REQUEST_BYTES, set to the same here). */
const OVERSIZE = Math.round(1.15 * LIMIT);
/** Under the limits, above what is worth reading only to drop it. */
const LARGE = 300_000;

let stack: Stack;
let apiKey: string;

test.before(async () => {
  stack = await startStack('sqlite', { ROUTER_MAX_REQUEST_BYTES: String(LIMIT) });
  apiKey = (await stack.user()).apiKey;
});
test.after.always(async () => {
  await stack?.stop();
});

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

/** A body of `size` bytes of the given kind: a form field or a JSON string. */
function bodyOf(type: string, size: number): Buffer {
  if (type === FORM) return Buffer.from(`csrf=x&api_key=${'a'.repeat(size - 15)}`);
  return Buffer.from(`{"name":"${'a'.repeat(size - 11)}"}`);
}

/** The same body in chunked framing (RFC 9112 §7.1), in 64 KiB chunks: no length declared up front. */
function chunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += 65_536) {
    const chunk = body.subarray(at, at + 65_536);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

interface Case {
  readonly name: string;
  readonly method?: string;
  readonly path: string;
  readonly type: string;
  /** A Content-Encoding the parsers do not know (415 before reading). */
  readonly coding?: string;
  readonly size: number;
  readonly key: boolean;
  readonly framing: 'length' | 'chunked';
  /** The first answer's status on each port (the proxy refuses a declared oversize body itself). */
  readonly status: number;
  readonly ports: readonly ('admin' | 'proxy')[];
}

const BOTH = ['admin', 'proxy'] as const;

const CASES: readonly Case[] = [
  {
    name: 'sign-in page, oversize form',
    path: '/oauth/sign-in',
    type: FORM,
    size: OVERSIZE,
    key: false,
    framing: 'length',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'consent page, oversize form',
    path: '/oauth/consent',
    type: FORM,
    size: OVERSIZE,
    key: false,
    framing: 'length',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'device page, oversize chunked form',
    path: '/device',
    type: FORM,
    size: OVERSIZE,
    key: false,
    framing: 'chunked',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'sign-in page, oversize chunked form',
    path: '/oauth/sign-in',
    type: FORM,
    size: OVERSIZE,
    key: false,
    framing: 'chunked',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'JSON route, oversize body',
    path: '/api/v1/protocol/agents',
    type: JSON_TYPE,
    size: OVERSIZE,
    key: true,
    framing: 'length',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'JSON route, oversize chunked body',
    path: '/api/v1/protocol/agents',
    type: JSON_TYPE,
    size: OVERSIZE,
    key: true,
    framing: 'chunked',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'OAuth token endpoint, oversize form',
    path: '/oauth/token',
    type: FORM,
    size: OVERSIZE,
    key: false,
    framing: 'chunked',
    status: 413,
    ports: BOTH,
  },
  {
    name: 'JSON route without a key (401 before the body)',
    path: '/api/v1/protocol/agents',
    type: JSON_TYPE,
    size: OVERSIZE,
    key: false,
    framing: 'length',
    status: 401,
    ports: ['admin'],
  },
  {
    name: 'JSON route without a key, large body',
    path: '/api/v1/protocol/agents',
    type: JSON_TYPE,
    size: LARGE,
    key: false,
    framing: 'length',
    status: 401,
    ports: BOTH,
  },
  {
    name: 'JSON route, a body of another media type, not read (400)',
    path: '/api/v1/protocol/agents',
    type: 'text/plain',
    size: LARGE,
    key: true,
    framing: 'length',
    status: 400,
    ports: BOTH,
  },
  {
    name: 'JSON route, an unsupported content coding (415)',
    path: '/api/v1/protocol/agents',
    type: JSON_TYPE,
    coding: 'x-unknown',
    size: LARGE,
    key: true,
    framing: 'chunked',
    status: 415,
    ports: BOTH,
  },
  {
    name: 'sign-in page, an unsupported content coding (415)',
    path: '/oauth/sign-in',
    type: FORM,
    coding: 'x-unknown',
    size: LARGE,
    key: false,
    framing: 'length',
    status: 415,
    ports: BOTH,
  },
  {
    name: 'no route (404) with a body',
    path: '/api/v1/protocol/nothing',
    type: JSON_TYPE,
    size: LARGE,
    key: true,
    framing: 'chunked',
    status: 404,
    ports: BOTH,
  },
  {
    name: 'a GET route posted to (405) with a body',
    path: '/api/v1/delegation',
    type: JSON_TYPE,
    size: LARGE,
    key: true,
    framing: 'length',
    status: 405,
    ports: BOTH,
  },
  {
    name: 'router route, oversize body',
    path: '/api/v1/router/route',
    type: JSON_TYPE,
    size: OVERSIZE,
    key: true,
    framing: 'length',
    status: 413,
    ports: ['proxy'],
  },
  {
    name: 'router route, oversize chunked body',
    path: '/api/v1/router/route',
    type: JSON_TYPE,
    size: OVERSIZE,
    key: true,
    framing: 'chunked',
    status: 413,
    ports: ['proxy'],
  },
  {
    name: 'router route without a key (401 before the body)',
    path: '/api/v1/router/route',
    type: JSON_TYPE,
    size: OVERSIZE,
    key: false,
    framing: 'length',
    status: 401,
    ports: ['proxy'],
  },
  {
    name: 'router: no route (404) with a body',
    path: '/api/v1/router/nothing',
    type: JSON_TYPE,
    size: LARGE,
    key: true,
    framing: 'chunked',
    status: 404,
    ports: ['proxy'],
  },
  {
    name: 'router: a GET route posted to (405) with a body',
    path: '/api/v1/router/payments/summary',
    type: JSON_TYPE,
    size: LARGE,
    key: true,
    framing: 'length',
    status: 405,
    ports: ['proxy'],
  },
];

/** Runs `n` trials, `parallel` at a time. */
async function trials(n: number, parallel: number, one: () => Promise<NextOutcome>): Promise<NextOutcome[]> {
  const out: NextOutcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        next += 1;
        out.push(await one());
      }
    }),
  );
  return out;
}

for (const c of CASES) {
  for (const port of c.ports) {
    test(`${port}: ${c.name} -> ${c.status}, then the connection is closed (said so) or the next request answered`, async (t) => {
      const origin = port === 'admin' ? stack.adminUrl : stack.proxyUrl;
      const raw = bodyOf(c.type, c.size);
      const body = c.framing === 'chunked' ? chunked(raw) : raw;
      const head = keepAliveHead(origin, c.method ?? 'POST', c.path, {
        'content-type': c.type,
        ...(c.coding === undefined ? {} : { 'content-encoding': c.coding }),
        ...(c.framing === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(raw.length) }),
        ...(c.key ? { authorization: `Bearer ${apiKey}` } : {}),
      });
      const next = keepAliveHead(origin, 'GET', '/healthz', {});
      const outcomes = await trials(TRIALS, 4, () => requestThenNext(origin, { head, body }, next, WAIT_MS));
      const wrong = outcomes.filter(
        (o) =>
          (o.kind !== 'closed' && o.kind !== 'answered') ||
          o.first?.status !== c.status ||
          (o.kind === 'answered' && o.second.status !== 200),
      );
      t.deepEqual(
        wrong.map((o) =>
          o.kind === 'closed' || o.kind === 'answered'
            ? `${o.kind}: first ${o.first.status}${o.kind === 'answered' ? `, second ${o.second.status}` : ''}`
            : `${o.kind}: first ${o.first?.status ?? 'none'} (${o.note})`,
        ),
        [],
      );
      t.is(outcomes.length, TRIALS);
    });
  }
}

/**
 * Sends a head declaring `declared` bytes and the first `sent` of them; once the answer is in, the rest (which reads
 * like a request of its own: a server that took it for one would answer it) and then `next`. Collects every answer
 * until `next`'s, the server's close, or the bound.
 */
function refusedMidBody(
  origin: string,
  path: string,
  declared: number,
  sent: number,
): Promise<{ statuses: number[]; connection: string | undefined; closed: boolean }> {
  const { hostname, port, host } = new URL(origin);
  const smuggled = `GET /nothing-here HTTP/1.1\r\nhost: ${host}\r\n\r\n`;
  const body = `${smuggled}${' '.repeat(declared - smuggled.length)}`;
  const head = keepAliveHead(origin, 'POST', path, { 'content-type': JSON_TYPE, 'content-length': String(declared) });
  const next = keepAliveHead(origin, 'GET', '/healthz', {});
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const statuses: number[] = [];
    let connection: string | undefined;
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${origin}${path}: no end within ${WAIT_MS} ms; answers so far: ${statuses.join(', ')}`));
    }, WAIT_MS);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ statuses, connection, closed });
    };
    socket.on('error', () => finish(true));
    socket.on('end', () => finish(true));
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      for (;;) {
        const m = /^HTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n/.exec(text);
        if (m === null) return;
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(m[0])?.[1] ?? '0');
        if (text.length < m[0].length + length) return;
        text = text.slice(m[0].length + length);
        statuses.push(Number(m[1]));
        if (statuses.length === 1) {
          connection = /\r\nconnection: ([^\r]*)/i.exec(m[0])?.[1]?.toLowerCase();
          // The rest of the refused body, then the next request.
          socket.write(body.slice(sent));
          socket.write(next);
        } else if (statuses.length === 2) {
          // Any further answer would be to the smuggled request: give it a moment to show.
          setTimeout(() => finish(false), 200);
        }
      }
    });
    socket.write(head);
    socket.write(body.slice(0, sent));
  });
}

for (const port of ['admin', 'proxy'] as const) {
  test(`${port}: a small body refused before it was all in (401) is read and dropped: the connection stays, the next request is answered, the rest is no request`, async (t) => {
    const origin = port === 'admin' ? stack.adminUrl : stack.proxyUrl;
    for (const path of ['/api/v1/protocol/agents', '/api/v1/router/route']) {
      for (let i = 0; i < 5; i++) {
        const r = await refusedMidBody(origin, path, 2_000, 100);
        t.deepEqual(r, { statuses: [401, 200], connection: 'keep-alive', closed: false }, `${origin}${path}`);
      }
    }
  });
}

test('the fate of an unread body: nothing without a body or when it is all in, drained when small, else closed', (t) => {
  const req = (complete: boolean, headers: Record<string, string>) => ({ complete, headers });
  t.is(unreadBodyOf(req(false, {}), 401), 'none');
  t.is(unreadBodyOf(req(false, { 'content-length': '0' }), 401), 'none');
  t.is(unreadBodyOf(req(true, { 'content-length': '5000000' }), 401), 'none');
  t.is(unreadBodyOf(req(false, { 'content-length': String(DRAIN_MAX_BYTES) }), 401), 'drain');
  t.is(unreadBodyOf(req(false, { 'content-length': String(DRAIN_MAX_BYTES + 1) }), 404), 'close');
  t.is(unreadBodyOf(req(false, { 'transfer-encoding': 'chunked' }), 403), 'close');
  t.is(unreadBodyOf(req(false, { 'content-length': 'x' }), 401), 'close');
  for (const status of [408, 413]) {
    t.is(unreadBodyOf(req(true, { 'content-length': '10' }), status), 'close');
    t.is(unreadBodyOf(req(false, { 'content-length': '10' }), status), 'close');
  }
});
