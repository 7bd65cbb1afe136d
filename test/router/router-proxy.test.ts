// The streaming variant of mode B (`/router/proxy`): ALL /api/v1/router/proxy and its alias
// /api/v1/proxy with the X-Router-* control headers, through the real proxy process.
import test from 'ava';
import { getAddress } from 'viem';
import { MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { forEachDb } from '../support/matrix.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  createDelegation,
  delegationRow,
  fourOhTwoAgainMerchant,
  paymentRow,
  paymentRows,
  scriptedMerchant,
  startMerchants,
  payingUser,
} from '../support/router-fixtures.js';
import { startStack } from '../support/stack.js';

const PRICE = 10_000n;
let m: Merchants;
let echo: ScriptedMerchant;
let again: ScriptedMerchant;
/** Per-request gates of /slow?id=...: the merchant ends its answer only once the test released it. */
const gates = new Map<string, () => void>();
let streamer: ScriptedMerchant;

test.before(async () => {
  m = await startMerchants(PRICE);
  again = await fourOhTwoAgainMerchant(m.v2);
  echo = await scriptedMerchant(async (req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    // The merchant tries to smuggle our own control headers back: they must not reach the caller.
    res.writeHead(200, { 'content-type': 'application/json', 'x-router-payment-id': 'forged', 'x-merchant': 'yes' });
    res.end(
      JSON.stringify({
        method: req.method,
        url: req.url,
        body: Buffer.concat(chunks).toString('utf8'),
        authorization: req.headers.authorization ?? null,
      }),
    );
  });
  // /slow: first chunk, then waits for the test to have read it before ending (proves streaming);
  // /big: 50 MB in 64 KB chunks, honouring backpressure (for the relay cap).
  streamer = await scriptedMerchant(async (req, res) => {
    if (req.url?.startsWith('/slow?id=')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first-chunk;');
      const released = new Promise<void>((r) => gates.set(req.url?.slice(9) ?? '', r));
      await Promise.race([released, new Promise((r) => setTimeout(r, 10_000))]);
      res.end('last-chunk');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let sent = 0; sent < 50 * 1024 * 1024 && !res.destroyed; sent += chunk.length) {
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    res.end();
  });
});

test.after.always(async () => {
  await Promise.all([m?.close(), echo?.close(), again?.close(), streamer?.close()]);
});

let n = 0;
const rid = () => `px-${Date.now()}-${++n}`;

forEachDb(({ stack, test }) => {
  const paidUser = () => payingUser(stack(), m.chain, 100_000_000n, 1000);
  const hdrs = (url: string, delegationId: string, requestId = rid()) => ({
    'x-router-target-url': url,
    'x-router-delegation-id': delegationId,
    'x-router-request-id': requestId,
  });

  test('free relay: method, body and status relayed; X-Router-* stripped both ways; API key never sent', async (t) => {
    const { u, delegationId } = await paidUser();
    for (const path of ['/router/proxy', '/proxy']) {
      const marker = rid();
      const r = await u.api.call(
        'POST',
        path,
        { hello: 'world' },
        {
          ...hdrs(`${echo.url}/echo?q=1`, delegationId),
          'x-router-upstream-authorization': 'Bearer merchant-token',
          'x-test-id': marker,
        },
      );
      t.is(r.status, 200, r.text);
      t.deepEqual(r.body, {
        method: 'POST',
        url: '/echo?q=1',
        body: '{"hello":"world"}',
        authorization: 'Bearer merchant-token',
      });
      t.is(r.headers.get('x-router-payment-id'), null, 'the merchant cannot forge our headers');
      t.is(r.headers.get('x-merchant'), 'yes');
      const seen = echo.seen.find((h) => h['x-test-id'] === marker) ?? {};
      t.is(seen['x-test-id'], marker);
      t.deepEqual(
        Object.keys(seen).filter((k) => k.startsWith('x-router-')),
        [],
      );
      t.false(JSON.stringify(seen).includes(u.apiKey));
    }
    const get = await u.api.call('GET', '/router/proxy', undefined, hdrs(`${echo.url}/x`, delegationId));
    t.is(get.body.method, 'GET');
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('paid relay: merchant body with X-Router-Payment-Id / -Status / -Tx-Hash', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.call('GET', '/router/proxy', undefined, hdrs(m.v2.url + m.v2.paidPath, delegationId));
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { answer: 42 });
    const id = r.headers.get('x-router-payment-id') ?? '';
    t.regex(id, /^[0-9a-f-]{36}$/);
    t.is(r.headers.get('x-router-payment-status'), 'Settled');
    t.regex(r.headers.get('x-router-tx-hash') ?? '', /^0x[0-9a-f]{64}$/);
    // The fee leg settles once the body was relayed whole, just after the caller read its end.
    let row = await paymentRow(stack(), id);
    for (let i = 0; i < 50 && row?.feeStatus === 'reserved'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await paymentRow(stack(), id);
    }
    t.like(row, {
      mode: 'proxy',
      status: 'Settled',
      recipient: getAddress(MERCHANT_V2),
      feeStatus: 'settled',
      capChargedCents: 2n,
    });
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
    // Same requestId again: 409 with the paymentId.
    const requestId = row?.requestId ?? '';
    const dup = await u.api.call('GET', '/proxy', undefined, hdrs(m.v2.url + m.v2.paidPath, delegationId, requestId));
    t.is(dup.status, 409);
    t.is(dup.body.paymentId, id);
  });

  test('paid relay refused by the merchant (402 again): relayed 402, status Failed, no X-Router-* upstream', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.call('GET', '/router/proxy', undefined, hdrs(`${again.url}/paid`, delegationId));
    t.is(r.status, 402);
    t.is(r.headers.get('x-router-payment-status'), 'Failed');
    t.is(r.headers.get('x-router-tx-hash'), null);
    // (The sqlite and postgresql runs share this merchant: look at every paid hop it saw.)
    const paidHops = again.seen.filter((h) => h['payment-signature'] !== undefined);
    t.true(paidHops.length > 0);
    t.deepEqual(
      paidHops.flatMap((h) => Object.keys(h).filter((k) => k.startsWith('x-router-'))),
      [],
    );
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n, 'fee released');
  });

  test('a 402 whose body breaks off -> 502 BCK.HTTP.0502, nothing paid', async (t) => {
    const { u, delegationId } = await paidUser();
    const broken = await scriptedMerchant((_req, res) => {
      res.writeHead(402, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"x402Version":2,');
      setTimeout(() => res.socket?.destroy(), 50).unref();
    });
    try {
      const r = await u.api.call('GET', '/router/proxy', undefined, hdrs(`${broken.url}/x`, delegationId));
      t.is(r.status, 502, r.text);
      t.is(r.body.code, 'BCK.HTTP.0502');
      t.is((await paymentRows(stack(), u.userId)).length, 0);
    } finally {
      await broken.close();
    }
  });

  test('a redirect to 169.254.169.254 is relayed as a 3xx without its location, never followed', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await fetch(`${stack().baseUrl}/router/proxy`, {
      redirect: 'manual',
      headers: { authorization: `Bearer ${u.apiKey}`, ...hdrs(`${echo.url}/redirect`, delegationId) },
    });
    t.true(r.status === 302 || r.status === 400, String(r.status));
    t.is(r.headers.get('location'), null);
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('a chunked body past the limit (no Content-Length to refuse up front) is answered 413 BCK.HTTP.0413', async (t) => {
    const u = await stack().user();
    // 1.5 MB in 64 KiB chunks to mode A (1 MiB JSON limit): the proxy stops buffering, discards the rest and answers.
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 24; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const r = await fetch(`${stack().baseUrl}/router/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.apiKey}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    t.is(r.status, 413);
    t.is(((await r.json()) as { code: string }).code, 'BCK.HTTP.0413');
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('missing or malformed control headers -> 400 BCK.ROUTER.0001', async (t) => {
    const { u, delegationId } = await paidUser();
    const full = hdrs(`${echo.url}/x`, delegationId);
    for (const drop of Object.keys(full)) {
      const h: Record<string, string> = { ...full };
      delete h[drop];
      const r = await u.api.call('GET', '/router/proxy', undefined, h);
      t.is(r.status, 400, drop);
      t.is(r.body.code, 'BCK.ROUTER.0001', drop);
    }
    const bad = await u.api.call('GET', '/router/proxy', undefined, { ...full, 'x-router-delegation-id': 'nope' });
    t.is(bad.status, 400);
    const noKey = await fetch(`${stack().baseUrl}/router/proxy`, { headers: full });
    t.is(noKey.status, 401);
  });

  test('the answer streams: the first bytes arrive before the merchant has finished', async (t) => {
    const { u, delegationId } = await paidUser();
    const id = rid();
    const res = await fetch(`${stack().baseUrl}/router/proxy`, {
      headers: { authorization: `Bearer ${u.apiKey}`, ...hdrs(`${streamer.url}/slow?id=${id}`, delegationId) },
    });
    t.is(res.status, 200);
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    const first = await reader.read();
    t.is(Buffer.from(first.value ?? []).toString('utf8'), 'first-chunk;');
    t.true(gates.has(id), 'the merchant is still waiting');
    gates.get(id)?.(); // only now may the merchant finish
    let rest = '';
    for (;;) {
      const c = await reader.read();
      if (c.done) break;
      rest += Buffer.from(c.value).toString('utf8');
    }
    t.is(rest, 'last-chunk');
  });
}, PAID_ENV);

test('a 50 MB answer is cut at ROUTER_MAX_RELAY_BYTES with bounded memory', async (t) => {
  const s = await startStack('sqlite', { ...PAID_ENV, ROUTER_MAX_RELAY_BYTES: String(1024 * 1024) });
  try {
    const u = await s.user();
    const delegationId = await createDelegation(u, 100);
    const res = await fetch(`${s.baseUrl}/router/proxy`, {
      headers: {
        authorization: `Bearer ${u.apiKey}`,
        'x-router-target-url': `${streamer.url}/big`,
        'x-router-delegation-id': delegationId,
        'x-router-request-id': rid(),
      },
    });
    t.is(res.status, 200);
    let got = 0;
    let cut = false;
    try {
      const reader = res.body?.getReader();
      for (;;) {
        const c = await reader?.read();
        if (c === undefined || c.done) break;
        got += c.value.length;
      }
    } catch {
      cut = true;
    }
    t.true(cut, 'the relay is cut, not ended cleanly');
    t.true(got <= 1024 * 1024 + 128 * 1024, `relayed ${got} bytes`);
    const h = await fetch(`${s.proxyUrl}/healthz`);
    t.is(h.status, 200, 'the proxy is still up');
  } finally {
    await s.stop();
  }
});
