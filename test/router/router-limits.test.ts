// Limits of mode B that protect the proxy's memory and its users' concurrency slots: what POST
// /router/route buffers of a merchant's answer (ROUTER_MAX_ROUTE_BODY_BYTES), JSON too deep to serialize again
// (answers and request bodies), and request bodies that stall or trickle (ROUTER_REQUEST_BODY_TIMEOUT_MS -> 408).
// The stack runs with small limits so that each case is quick.
import { connect } from 'node:net';
import test from 'ava';
import { StubChain } from '../support/merchants/chain.js';
import { MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { type X402V2Merchant, startX402V2Merchant } from '../support/merchants/x402-v2.js';
import { forEachDb } from '../support/matrix.js';
import {
  CHAIN_ID,
  EURC,
  PAID_ENV,
  type ScriptedMerchant,
  USDC,
  createDelegation,
  fund,
  paymentRows,
  scriptedMerchant,
} from '../support/router-fixtures.js';
import type { Stack } from '../support/stack.js';

const ROUTE_LIMIT = 65_536;
const BODY_TIMEOUT_MS = 1_000;
const ENV = {
  ...PAID_ENV,
  ROUTER_MAX_ROUTE_BODY_BYTES: String(ROUTE_LIMIT),
  ROUTER_REQUEST_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
  // One call in flight per user: a slot a stalled upload kept would refuse the user's next call (429).
  ROUTER_MAX_CONCURRENT_PER_USER: '1',
};
/** Route's own bound on JSON nesting (shared/router/flows/route.ts MAX_JSON_DEPTH). */
const MAX_DEPTH = 512;

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** A JSON string literal of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => `"${'a'.repeat(bytes - 2)}"`;

let v2: X402V2Merchant;
/** Answers 402 (the v2 merchant's requirements) unpaid where the path says /paid-*, and then the scripted answer. */
let merchant: ScriptedMerchant;
/** Request bodies the merchant received, by x-test-id. */
const received = new Map<string, string>();

test.before(async () => {
  v2 = await startX402V2Merchant({
    chain: new StubChain(CHAIN_ID, [USDC, EURC]),
    payTo: MERCHANT_V2,
    usdcAmount: '10000',
    usdc: USDC,
    eurc: EURC,
  });
  const required = (await fetch(v2.url + v2.paidPath)).headers.get('payment-required') ?? '';
  merchant = await scriptedMerchant(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const id = req.headers['x-test-id'];
    if (typeof id === 'string') received.set(id, Buffer.concat(chunks).toString('utf8'));
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/paid-') && req.headers['payment-signature'] === undefined) {
      res.writeHead(402, { 'payment-required': required, 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    const json = { 'content-type': 'application/json' };
    switch (path) {
      case '/exact': // exactly the limit, declared
        res.writeHead(200, json);
        res.end(jsonOfSize(ROUTE_LIMIT));
        return;
      case '/over-declared':
        res.writeHead(200, { ...json, 'content-length': String(ROUTE_LIMIT + 1) });
        res.end(jsonOfSize(ROUTE_LIMIT + 1));
        return;
      case '/over-chunked':
      case '/paid-over': {
        // One byte over the limit, chunked (undeclared): found while reading.
        const body = jsonOfSize(ROUTE_LIMIT + 1);
        res.writeHead(200, json);
        res.write(body.slice(0, ROUTE_LIMIT));
        res.end(body.slice(ROUTE_LIMIT));
        return;
      }
      case '/deep':
      case '/paid-deep':
        res.writeHead(200, json);
        res.end(nested(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '5000')));
        return;
      default:
        res.writeHead(200, json);
        res.end('{"ok":true}');
    }
  });
});

test.after.always(async () => {
  await Promise.all([v2?.close(), merchant?.close()]);
});

let n = 0;
const rid = () => `lim-${Date.now()}-${++n}`;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** The server closed the connection (FIN or reset), rather than the test's own guard. */
  closedByServer: boolean;
}

/**
 * Sends a request head declaring `declared` body bytes, then `first` of them, then (if `trickle`) one more byte
 * every 50 ms, never the whole body; reads the answer until the server closes the connection (guard: 60 s, far above the limit).
 */
function stalledUpload(
  stack: Stack,
  path: string,
  headers: Record<string, string>,
  declared: number,
  first: Buffer,
  trickle = false,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(stack.proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let closedByServer = true;
    const guard = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, 60_000);
    socket.on('error', () => {}); // writes after the server closed
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => {
      clearTimeout(guard);
      clearInterval(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      if (split < 0) {
        reject(new Error(`no answer: ${JSON.stringify(raw)}`));
        return;
      }
      const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
      const h: Record<string, string> = {};
      for (const l of lines) h[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers: h,
        body: JSON.parse(raw.slice(split + 4)) as Record<string, unknown>,
        closedByServer,
      });
    });
    socket.on('connect', () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        `host: ${hostname}:${port}`,
        'content-type: application/json',
        `content-length: ${declared}`,
      ];
      for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      socket.write(first);
      if (trickle) timer = setInterval(() => socket.write(' '), 50);
    });
  });
}

forEachDb(({ stack, test }) => {
  async function paidUser() {
    const u = await stack().user();
    await fund(stack(), undefined, u, 100_000_000n);
    return { u, delegationId: await createDelegation(u, 1000) };
  }

  test('route: a free answer of exactly ROUTER_MAX_ROUTE_BODY_BYTES is relayed whole', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${merchant.url}/exact` });
    t.is(r.status, 200, r.text.slice(0, 300));
    t.deepEqual(Object.keys(r.body).sort(), ['body', 'paid', 'status']);
    t.is(r.body.body, 'a'.repeat(ROUTE_LIMIT - 2));
    t.false(r.body.paid);
  });

  test('route: a free answer one byte over the limit (declared or found while reading) -> 400 BCK.ROUTER.0001 naming the limit, nothing paid', async (t) => {
    const { u, delegationId } = await paidUser();
    for (const path of ['/over-declared', '/over-chunked']) {
      const requestId = rid();
      const r = await u.api.post('/router/route', { requestId, delegationId, url: `${merchant.url}${path}` });
      t.is(r.status, 400, `${path}: ${r.text.slice(0, 300)}`);
      t.is(r.body.code, 'BCK.ROUTER.0001', path);
      t.deepEqual(JSON.parse(r.body.params as string), { reason: 'response too large', limitBytes: ROUTE_LIMIT }, path);
      t.true((r.body.details as string).includes('/router/proxy'), path);
      // Nothing was claimed for good: the same requestId may be used again.
      const again = await u.api.post('/router/route', { requestId, delegationId, url: `${merchant.url}/small` });
      t.is(again.status, 200, path);
    }
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('route: a paid answer over the limit -> 502 naming the payment (top level and params), requestId spent', async (t) => {
    const { u, delegationId } = await paidUser();
    const requestId = rid();
    const r = await u.api.post('/router/route', { requestId, delegationId, url: `${merchant.url}/paid-over` });
    t.is(r.status, 502, r.text.slice(0, 300));
    t.is(r.body.code, 'BCK.HTTP.0502');
    const rows = await paymentRows(stack(), u.userId);
    t.is(rows.length, 1);
    const paymentId = rows[0]?.id;
    t.is(r.body.paymentId, paymentId);
    t.like(JSON.parse(r.body.params as string), { paymentId, reason: 'response too large' });
    t.like(rows[0], { status: 'Issued', feeStatus: 'released' });
    const dup = await u.api.post('/router/route', { requestId, delegationId, url: `${merchant.url}/paid-over` });
    t.is(dup.status, 409, dup.text);
    t.is(dup.body.paymentId, paymentId);
  });

  test('route: JSON nested deeper than the route re-serializes is relayed as its text (free and paid), never a 500', async (t) => {
    const { u, delegationId } = await paidUser();
    const free = await u.api.post('/router/route', {
      requestId: rid(),
      delegationId,
      url: `${merchant.url}/deep?n=5000`,
    });
    t.is(free.status, 200, free.text.slice(0, 300));
    t.is(free.body.body, nested(5000));
    t.false(free.body.paid);
    const justOver = await u.api.post('/router/route', {
      requestId: rid(),
      delegationId,
      url: `${merchant.url}/deep?n=${MAX_DEPTH + 1}`,
    });
    t.is(justOver.body.body, nested(MAX_DEPTH + 1));
    const atBound = await u.api.post('/router/route', {
      requestId: rid(),
      delegationId,
      url: `${merchant.url}/deep?n=${MAX_DEPTH}`,
    });
    t.is(atBound.status, 200);
    t.deepEqual(atBound.body.body, JSON.parse(nested(MAX_DEPTH)), 'at the bound the answer is JSON');

    const paid = await u.api.post('/router/route', {
      requestId: rid(),
      delegationId,
      url: `${merchant.url}/paid-deep?n=5000`,
    });
    t.is(paid.status, 200, paid.text.slice(0, 300));
    t.true(paid.body.paid);
    t.is(paid.body.body, nested(5000));
    const rows = await paymentRows(stack(), u.userId);
    t.is(rows.length, 1);
    t.is(paid.body.payment.paymentId, rows[0]?.id);
  });

  test('route: a request body nested deeper than the bound -> 400 BCK.ROUTER.0001 before the merchant is called', async (t) => {
    const { u, delegationId } = await paidUser();
    for (const depth of [MAX_DEPTH + 1, 5000]) {
      const id = rid();
      const raw = `{"requestId":"${rid()}","delegationId":"${delegationId}","url":"${merchant.url}/echo","method":"POST","body":${nested(depth)},"headers":{"x-test-id":"${id}"}}`;
      const r = await u.api.raw('POST', '/router/route', raw);
      t.is(r.status, 400, `${depth}: ${r.text.slice(0, 300)}`);
      t.is(r.body.code, 'BCK.ROUTER.0001');
      t.deepEqual(JSON.parse(r.body.params as string), {
        issues: [`body.body: nests arrays/objects deeper than ${MAX_DEPTH} levels`],
      });
      t.false(received.has(id), 'the merchant was not called');
    }
    const id = rid();
    const ok = await u.api.raw(
      'POST',
      '/router/route',
      `{"requestId":"${rid()}","delegationId":"${delegationId}","url":"${merchant.url}/echo","method":"POST","body":${nested(MAX_DEPTH)},"headers":{"x-test-id":"${id}"}}`,
    );
    t.is(ok.status, 200, ok.text.slice(0, 300));
    t.is(received.get(id), nested(MAX_DEPTH), 'at the bound the body is sent');
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('route: a body that stalls after 500 kB of a declared 1 MB -> 408 BCK.HTTP.0408 with Connection: close, then the connection is closed', async (t) => {
    const { u, delegationId } = await paidUser();
    const a = await stalledUpload(
      stack(),
      '/api/v1/router/route',
      { authorization: `Bearer ${u.apiKey}` },
      1_000_000,
      Buffer.alloc(500_000, 0x20),
    );
    t.is(a.status, 408);
    t.is(a.headers.connection, 'close');
    t.like(a.body, { code: 'BCK.HTTP.0408', httpStatus: 408, category: 'validation', retryable: true });
    t.deepEqual(JSON.parse(a.body.params as string), { timeoutMs: BODY_TIMEOUT_MS });
    t.true(a.closedByServer, 'the server closed the connection');
    const next = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${merchant.url}/small` });
    t.is(next.status, 200, next.text);
  });

  test('route: a body trickling a byte every 50 ms is still cut at the total bound -> 408', async (t) => {
    const u = await stack().user();
    const a = await stalledUpload(
      stack(),
      '/api/v1/router/route',
      { authorization: `Bearer ${u.apiKey}` },
      100_000,
      Buffer.from('{'),
      true,
    );
    t.is(a.status, 408);
    t.is(a.body.code, 'BCK.HTTP.0408');
    t.is(a.headers.connection, 'close');
    t.true(a.closedByServer);
  });

  test('proxy: a body that stalls -> 408, the connection closed, the concurrency slot and the requestId given back', async (t) => {
    const { u, delegationId } = await paidUser();
    const requestId = rid();
    const control = {
      'x-router-target-url': `${merchant.url}/echo`,
      'x-router-delegation-id': delegationId,
      'x-router-request-id': requestId,
    };
    const a = await stalledUpload(
      stack(),
      '/api/v1/router/proxy',
      { authorization: `Bearer ${u.apiKey}`, ...control },
      10_000_000,
      Buffer.alloc(2_000_000, 0x61),
    );
    t.is(a.status, 408);
    t.is(a.headers.connection, 'close');
    t.like(a.body, { code: 'BCK.HTTP.0408', httpStatus: 408 });
    t.true(a.closedByServer);
    // With one call in flight per user, this call succeeds only if the stalled one gave its slot back; the same
    // requestId is accepted because nothing was paid.
    const next = await u.api.call('POST', '/router/proxy', { hi: 1 }, control);
    t.is(next.status, 200, next.text);
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });
}, ENV);
