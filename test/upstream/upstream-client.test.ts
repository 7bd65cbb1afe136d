// The outbound client against real local servers (allowPrivate: true, as in tests and on a private network):
// status and body relayed, headers scrubbed both ways, redirects not followed, byte caps, timeouts, keep-alive,
// TLS verified against the name while connecting to the checked address.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import test, { type ExecutionContext } from 'ava';
import { type UpstreamOptions, createUpstream } from '../../shared/upstream/client.js';
import { type Failed, type Refused, UpstreamStreamError } from '../../shared/upstream/outcomes.js';
import { REASON, headersTooLarge } from '../../shared/upstream/reasons.js';
import type { Resolver } from '../../shared/upstream/resolver.js';
import { upstreamAppError } from '../../shared/upstream/to-app-error.js';
import { writeSelfSigned } from '../support/tls.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const seen: Seen[] = [];
let connections = 0;
let server: Server;
let base: string;
const BIG = 64 * 1024;

const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/echo': (_req, res) => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-merchant': 'yes' });
    res.end(JSON.stringify({ ok: true }));
  },
  '/dirty': (_req, res) => {
    res.setHeader('set-cookie', ['session=evil; Domain=.example.com', 'b=2']);
    res.setHeader('x-router-payment-status', 'Settled');
    res.setHeader('x-router-tx-hash', '0xforged');
    res.setHeader('alt-svc', 'h3=":443"');
    res.setHeader('strict-transport-security', 'max-age=63072000');
    res.setHeader('clear-site-data', '"*"');
    res.setHeader('proxy-authenticate', 'Basic');
    res.setHeader('keep-alive', 'timeout=5');
    res.setHeader('connection', 'keep-alive, x-hop-secret');
    res.setHeader('x-hop-secret', 'named in Connection');
    res.setHeader('www-authenticate', 'Payment id="abc", method="evm"');
    res.setHeader('payment-required', 'eyJ4NDAyVmVyc2lvbiI6Mn0=');
    res.setHeader('x-kept', ['a', 'b']);
    res.writeHead(402, { 'content-type': 'text/plain' });
    res.end('pay me');
  },
  '/redirect': (_req, res) => {
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
    res.end('moved');
  },
  '/big': (_req, res) => {
    res.writeHead(200, { 'content-length': String(BIG + 1) });
    res.end(Buffer.alloc(BIG + 1, 'a'));
  },
  '/big-chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const more = (): void => {
      if (sent > BIG * 4 || res.destroyed) {
        res.end();
        return;
      }
      sent += 8192;
      res.write(Buffer.alloc(8192, 'b'));
      setImmediate(more);
    };
    more();
  },
  '/exact': (_req, res) => {
    res.writeHead(200);
    res.end(Buffer.alloc(BIG, 'c'));
  },
  '/no-headers': () => {
    // accepts and never answers
  },
  '/idle': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first chunk');
    // then silence
  },
  '/drip': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => {
      if (res.destroyed) clearInterval(timer);
      else res.write('.');
    }, 25);
    res.on('close', () => clearInterval(timer));
  },
  '/stream': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    let n = 0;
    const timer = setInterval(() => {
      res.write(`chunk ${n}\n`);
      if (++n === 5) {
        clearInterval(timer);
        res.end();
      }
    }, 5);
  },
  '/head-big': (_req, res) => {
    res.writeHead(200, { 'content-length': String(BIG * 10) });
    res.end();
  },
  // ?n= bytes of one header value: an oversized PAYMENT-REQUIRED is the realistic case.
  '/big-header': (req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n'));
    res.writeHead(402, { 'payment-required': 'a'.repeat(n) });
    res.end('{}');
  },
  '/big-trailer': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-big' });
    res.write('body before the trailers');
    res.addTrailers({ 'x-big': 'a'.repeat(20_000) });
    res.end();
  },
};

test.before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
      if (route === undefined) {
        res.writeHead(404);
        res.end();
      } else route(req, res);
    });
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after.always(() => {
  server?.closeAllConnections();
  server?.close();
});

function upstream(extra: Partial<UpstreamOptions> = {}) {
  return createUpstream({
    allowPrivate: true,
    connectTimeoutMs: 2000,
    headersTimeoutMs: 2000,
    bodyTimeoutMs: 2000,
    maxBodyBytes: BIG,
    maxTotalMs: 10_000,
    ...extra,
  });
}

/** Reads a streamed body to its end, which must be an UpstreamStreamError carrying `outcome`. */
async function failsWith(t: ExecutionContext, body: AsyncIterable<unknown>, outcome: Refused | Failed): Promise<void> {
  const err = await t.throwsAsync(async () => {
    for await (const _ of body) {
      // drain
    }
  });
  t.true(err instanceof UpstreamStreamError);
  if (err instanceof UpstreamStreamError) t.deepEqual(err.outcome, outcome);
}

const pause = (): Promise<void> => new Promise((r) => setTimeout(r, 10));
const lastSeen = (path: string): Seen | undefined => seen.filter((s) => s.url.startsWith(path)).at(-1);

test('status, headers and body are relayed; the query survives and the fragment does not', async (t) => {
  const up = upstream();
  try {
    const r = await up.request({
      url: `${base}/echo?a=1&b=%20#frag`,
      method: 'POST',
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    t.is(r.type, 'response');
    if (r.type !== 'response') return;
    t.is(r.status, 201);
    t.is(r.headers['x-merchant'], 'yes');
    t.deepEqual(JSON.parse(r.body.toString()), { ok: true });
    const s = lastSeen('/echo?a=1');
    t.is(s?.url, '/echo?a=1&b=%20');
    t.is(s?.method, 'POST');
    t.is(s?.body, 'hello');
    t.is(s?.headers['content-length'], '5');
  } finally {
    await up.close();
  }
});

test('request headers are scrubbed: hop-by-hop, host, cookie, our API key, X-Router-*, payment credentials', async (t) => {
  const up = upstream();
  try {
    const r = await up.request({
      url: `${base}/echo?scrub`,
      method: 'PUT',
      body: Buffer.from('12345'),
      headers: {
        host: 'evil.example',
        cookie: 'sid=ours',
        authorization: 'Bearer sandbox:our-api-key',
        'proxy-authorization': 'Basic Zm9vOmJhcg==',
        'x-router-target-url': 'http://merchant/',
        'X-Router-Delegation-Id': 'dlg_1',
        'x-router-upstream-authorization': 'Bearer leak',
        'payment-signature': 'caller-made',
        'x-payment': 'caller-made',
        'payment-receipt': 'forged',
        connection: 'keep-alive, x-hop-request',
        'x-hop-request': 'named in Connection',
        'keep-alive': 'timeout=5',
        'proxy-connection': 'keep-alive',
        te: 'trailers',
        trailer: 'x-t',
        upgrade: 'websocket',
        'transfer-encoding': 'chunked',
        'content-length': '999',
        expect: '100-continue',
        'x-forwarded-for': '10.0.0.1',
        forwarded: 'for=10.0.0.1',
        'x-real-ip': '10.0.0.1',
        via: '1.1 caller-proxy',
        'accept-encoding': 'gzip, br',
        'user-agent': 'agent/1.0',
        'content-type': 'text/plain',
        'x-custom': ['one', 'two'],
        'x-absent': undefined,
      },
      upstreamAuthorization: 'Bearer merchant-key',
    });
    t.is(r.type, 'response');
    const h = lastSeen('/echo?scrub')?.headers ?? {};
    for (const name of [
      'cookie',
      'proxy-authorization',
      'x-router-target-url',
      'x-router-delegation-id',
      'x-router-upstream-authorization',
      'payment-signature',
      'x-payment',
      'payment-receipt',
      'x-hop-request',
      'keep-alive',
      'proxy-connection',
      'te',
      'trailer',
      'upgrade',
      'transfer-encoding',
      'expect',
      'x-forwarded-for',
      'forwarded',
      'x-real-ip',
      'via',
      'accept-encoding',
      'x-absent',
    ]) {
      t.is(h[name], undefined, name);
    }
    t.is(h.host, base.slice('http://'.length), 'Host comes from the target URL');
    t.is(h.authorization, 'Bearer merchant-key', 'only the explicit upstream authorization is sent');
    t.is(h['content-length'], '5', 'recomputed from the body');
    t.is(h['user-agent'], 'agent/1.0');
    t.is(h['content-type'], 'text/plain');
    t.is(h['x-custom'], 'one, two');
    t.is(lastSeen('/echo?scrub')?.body, '12345');
  } finally {
    await up.close();
  }
});

test('an explicit upstream Authorization with the Payment scheme is dropped; the router credential is sent', async (t) => {
  const up = upstream();
  try {
    await up.request({ url: `${base}/echo?pay1`, upstreamAuthorization: 'payment eyJmb3JnZWQiOnRydWV9' });
    t.is(lastSeen('/echo?pay1')?.headers.authorization, undefined);

    await up.request({
      url: `${base}/echo?pay2`,
      headers: { 'payment-signature': 'caller-made', authorization: 'Bearer ours' },
      credential: { name: 'payment-signature', value: 'router-made' },
    });
    t.is(lastSeen('/echo?pay2')?.headers['payment-signature'], 'router-made');
    t.is(lastSeen('/echo?pay2')?.headers.authorization, undefined);

    await up.request({
      url: `${base}/echo?pay3`,
      upstreamAuthorization: 'Bearer merchant-key',
      credential: { name: 'authorization', value: 'Payment eyJyb3V0ZXIiOnRydWV9' },
    });
    t.is(lastSeen('/echo?pay3')?.headers.authorization, 'Payment eyJyb3V0ZXIiOnRydWV9', 'the MPP credential wins');
  } finally {
    await up.close();
  }
});

test('response headers are scrubbed: set-cookie, X-Router-*, hop-by-hop, alt-svc, HSTS; payment challenges kept', async (t) => {
  const up = upstream();
  try {
    const r = await up.request({ url: `${base}/dirty` });
    t.is(r.type, 'response');
    if (r.type !== 'response') return;
    t.is(r.status, 402);
    t.is(r.body.toString(), 'pay me');
    for (const name of [
      'set-cookie',
      'x-router-payment-status',
      'x-router-tx-hash',
      'alt-svc',
      'strict-transport-security',
      'clear-site-data',
      'proxy-authenticate',
      'keep-alive',
      'connection',
      'x-hop-secret',
      'transfer-encoding',
    ]) {
      t.is(r.headers[name], undefined, name);
    }
    t.is(r.headers['www-authenticate'], 'Payment id="abc", method="evm"');
    t.is(r.headers['payment-required'], 'eyJ4NDAyVmVyc2lvbiI6Mn0=');
    t.is(r.headers['content-type'], 'text/plain');
    t.deepEqual(r.headers['x-kept'], ['a', 'b'], 'repeated fields stay repeated');
    for (const name of Object.keys(r.headers)) t.is(name, name.toLowerCase());
  } finally {
    await up.close();
  }
});

test.serial('redirects are not followed and Location is stripped', async (t) => {
  const up = upstream();
  try {
    const before = connections;
    const r = await up.request({ url: `${base}/redirect` });
    t.is(r.type, 'response');
    if (r.type !== 'response') return;
    t.is(r.status, 302);
    t.is(r.headers.location, undefined);
    t.is(r.body.toString(), 'moved');
    await pause();
    t.is(seen.filter((s) => s.url === '/redirect').length, 1, 'one request only');
    t.is(connections - before, 1, 'no second connection');
  } finally {
    await up.close();
  }
});

test('byte cap: a declared length over the cap is refused before reading; a chunked body is cut off', async (t) => {
  const up = upstream();
  try {
    const declared = await up.request({ url: `${base}/big` });
    t.deepEqual(declared, { type: 'refused', reason: REASON.responseTooLarge });
    t.is(upstreamAppError(declared as { type: 'refused'; reason: string }).httpStatus, 400);

    const chunked = await up.request({ url: `${base}/big-chunked` });
    t.deepEqual(chunked, { type: 'refused', reason: REASON.responseTooLarge });

    const exact = await up.request({ url: `${base}/exact` });
    t.is(exact.type, 'response');
    if (exact.type === 'response') t.is(exact.body.length, BIG, 'exactly the cap is allowed');

    const smaller = await up.request({ url: `${base}/exact`, maxBodyBytes: 1000 });
    t.deepEqual(smaller, { type: 'refused', reason: REASON.responseTooLarge }, 'a per-call cap');

    const head = await up.request({ url: `${base}/head-big`, method: 'HEAD' });
    t.is(head.type, 'response', 'HEAD: Content-Length describes a body that is not sent');
  } finally {
    await up.close();
  }
});

test('headers over the header limit refuse the answer (400 BCK.ROUTER.0001 naming the limit), not a 502', async (t) => {
  const up = upstream();
  try {
    const under = await up.request({ url: `${base}/big-header?n=${8 * 1024}` });
    t.is(under.type, 'response', 'a header well under the default 16 KiB passes');
    const over = await up.request({ url: `${base}/big-header?n=${1024 * 1024}` });
    t.deepEqual(over, { type: 'refused', reason: headersTooLarge(16 * 1024) });
    const e = upstreamAppError(over as { type: 'refused'; reason: string });
    t.is(e.httpStatus, 400);
    t.is(e.code, 'BCK.ROUTER.0001');
    t.is(e.details, "the merchant's response headers exceed 16384 bytes");

    const s = await up.stream({ url: `${base}/big-header?n=20000` });
    t.deepEqual(s, { type: 'refused', reason: headersTooLarge(16 * 1024) }, 'stream() the same');

    // Trailers count against the same limit; undici reports them on the body, after the status was relayed.
    const trailer = await up.stream({ url: `${base}/big-trailer` });
    t.is(trailer.type, 'response');
    if (trailer.type !== 'response') return;
    await failsWith(t, trailer.body, { type: 'refused', reason: headersTooLarge(16 * 1024) });
  } finally {
    await up.close();
  }
  const small = upstream({ maxHeaderBytes: 1024 });
  try {
    t.deepEqual(
      await small.request({ url: `${base}/big-header?n=2000` }),
      { type: 'refused', reason: headersTooLarge(1024) },
      'the configured limit is the one applied and named',
    );
  } finally {
    await small.close();
  }
});

test('headers timeout: a server that accepts and never answers', async (t) => {
  const up = upstream({ headersTimeoutMs: 300 });
  try {
    const r = await up.request({ url: `${base}/no-headers` });
    t.deepEqual(r, { type: 'failed', reason: REASON.headersTimeout });
    const e = upstreamAppError(r as { type: 'failed'; reason: typeof REASON.headersTimeout });
    t.is(e.httpStatus, 502);
  } finally {
    await up.close();
  }
});

test('idle timeout: the body stalls after the first chunk (buffered and streamed)', async (t) => {
  const up = upstream({ bodyTimeoutMs: 300 });
  try {
    t.deepEqual(await up.request({ url: `${base}/idle` }), { type: 'failed', reason: REASON.idleTimeout });

    const s = await up.stream({ url: `${base}/idle` });
    t.is(s.type, 'response');
    if (s.type !== 'response') return;
    await failsWith(t, s.body, { type: 'failed', reason: REASON.idleTimeout });
  } finally {
    await up.close();
  }
});

test('total timeout: a body that keeps dripping is cut at maxTotalMs', async (t) => {
  const up = upstream({ maxTotalMs: 400, bodyTimeoutMs: 2000 });
  try {
    t.deepEqual(await up.request({ url: `${base}/drip` }), { type: 'failed', reason: REASON.totalTimeout });
    // Also before the headers: the budget is a hard limit.
    t.deepEqual(await up.request({ url: `${base}/no-headers` }), { type: 'failed', reason: REASON.totalTimeout });
  } finally {
    await up.close();
  }
});

test('stream(): chunks arrive as the merchant sends them; a cap hit mid-stream errors the body', async (t) => {
  const up = upstream();
  try {
    const s = await up.stream({ url: `${base}/stream` });
    t.is(s.type, 'response');
    if (s.type !== 'response') return;
    let text = '';
    for await (const chunk of s.body) text += String(chunk);
    t.is(text, 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n');

    const big = await up.stream({ url: `${base}/big-chunked` });
    t.is(big.type, 'response');
    if (big.type !== 'response') return;
    await failsWith(t, big.body, { type: 'refused', reason: REASON.responseTooLarge });
  } finally {
    await up.close();
  }
});

test('a caller abort ends the call', async (t) => {
  const up = upstream();
  try {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    t.deepEqual(await up.request({ url: `${base}/no-headers`, signal: controller.signal }), {
      type: 'failed',
      reason: REASON.aborted,
    });
    t.deepEqual(await up.request({ url: `${base}/echo`, signal: AbortSignal.abort() }), {
      type: 'failed',
      reason: REASON.aborted,
    });
  } finally {
    await up.close();
  }
});

test('methods and header values that cannot be relayed are refused without a connection', async (t) => {
  const up = upstream();
  try {
    const before = connections;
    for (const method of ['CONNECT', 'TRACE', 'track', 'GET /x', 'G\r\nET', '']) {
      const r = await up.request({ url: `${base}/echo`, method });
      t.is(r.type, 'refused', method);
    }
    for (const headers of [{ 'x-a': 'b\r\nx-injected: 1' }, { 'bad name': 'x' }, { 'x-a': 'nul\0' }]) {
      t.is((await up.request({ url: `${base}/echo`, headers })).type, 'refused');
    }
    t.is((await up.request({ url: `${base}/echo`, upstreamAuthorization: 'Bearer a\r\nx: y' })).type, 'refused');
    t.is(connections, before);
  } finally {
    await up.close();
  }
});

test.serial('keep-alive: sequential calls reuse one connection', async (t) => {
  const up = upstream();
  try {
    const before = connections;
    for (let i = 0; i < 5; i++) {
      t.is((await up.request({ url: `${base}/echo?ka=${i}` })).type, 'response');
      // undici hands the socket back to its pool a tick after the body ends; a call made in the same tick opens a
      // second connection (plain undici does the same).
      await pause();
    }
    t.is(connections - before, 1);
  } finally {
    await up.close();
  }
});

test('connection refused is a failure, not a refusal', async (t) => {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  probe.close();
  await once(probe, 'close');
  const up = upstream();
  try {
    t.deepEqual(await up.request({ url: `http://127.0.0.1:${port}/` }), {
      type: 'failed',
      reason: REASON.connectionRefused,
    });
  } finally {
    await up.close();
  }
});

test.serial(
  'a name is resolved by the injected resolver only, once per connection, and connected to its address',
  async (t) => {
    const calls: string[] = [];
    const resolver: Resolver = {
      async lookup(hostname) {
        calls.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    };
    const up = upstream({ resolver });
    const port = (server.address() as AddressInfo).port;
    try {
      // `.invalid` never resolves in real DNS (RFC 6761 §6.4): success proves the socket layer did no lookup.
      const before = connections;
      for (let i = 0; i < 3; i++) {
        t.is((await up.request({ url: `http://merchant.invalid:${port}/echo?n=${i}` })).type, 'response');
        await pause();
      }
      t.is(calls.length, connections - before, 'one lookup per connection, none by the socket layer');
      t.deepEqual(calls, ['merchant.invalid']);
      t.is(lastSeen('/echo?n=2')?.headers.host, `merchant.invalid:${port}`, 'Host keeps the name');
    } finally {
      await up.close();
    }
  },
);

test('a dual-stack answer falls back to the next checked address when the first refuses', async (t) => {
  // Same port on both addresses: 127.0.0.2 refuses (the server listens on 127.0.0.1 only), 127.0.0.1 answers.
  const port = (server.address() as AddressInfo).port;
  const resolver: Resolver = {
    lookup: async () => [
      { address: '127.0.0.2', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ],
  };
  const up = upstream({ resolver });
  try {
    const r = await up.request({ url: `http://two.invalid:${port}/echo?fallback` });
    t.is(r.type, 'response');
  } finally {
    await up.close();
  }
});

test('the total budget and a caller abort also end a call whose connection is still being made', async (t) => {
  // The request is still queued in undici (no connection yet): exchange.ts answers at once and aborts the request
  // when it gets its connection, so neither limit waits for the connect timeout.
  const hang = { lookup: () => new Promise<never>(() => {}) };
  const up = upstream({ connectTimeoutMs: 1500, maxTotalMs: 300, resolver: hang });
  try {
    t.deepEqual(await up.request({ url: 'http://hang.invalid/' }), { type: 'failed', reason: REASON.totalTimeout });
  } finally {
    await up.close();
  }
  const up2 = upstream({ connectTimeoutMs: 1500, resolver: hang });
  try {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    t.deepEqual(await up2.stream({ url: 'http://hang.invalid/', signal: controller.signal }), {
      type: 'failed',
      reason: REASON.aborted,
    });
  } finally {
    await up2.close();
  }
});

test('backpressure: a reader that stops reading pauses the merchant; reading again resumes it', async (t) => {
  // The merchant writes 64 KiB chunks for as long as its socket takes them; with nobody reading our body, the
  // handler tells undici to pause, the socket buffers fill and the merchant's writes stop well short of 32 MiB.
  let written = 0;
  const merchant = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    const pump = (): void => {
      while (written < 32 * 1024 * 1024) {
        written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  merchant.listen(0, '127.0.0.1');
  await once(merchant, 'listening');
  const up = upstream({ maxBodyBytes: 64 * 1024 * 1024 });
  try {
    const s = await up.stream({ url: `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/` });
    t.is(s.type, 'response');
    if (s.type !== 'response') return;
    await new Promise((r) => setTimeout(r, 500));
    const whilePaused = written;
    t.true(whilePaused < 16 * 1024 * 1024, `the merchant wrote ${whilePaused} bytes while nobody read`);
    let read = 0;
    for await (const c of s.body) read += (c as Buffer).length;
    t.is(read, 32 * 1024 * 1024);
    t.is(written, 32 * 1024 * 1024);
  } finally {
    await up.close();
    merchant.closeAllConnections();
    merchant.close();
  }
});

test('connect timeout: a resolver that never answers', async (t) => {
  const up = upstream({ connectTimeoutMs: 200, resolver: { lookup: () => new Promise<never>(() => {}) } });
  try {
    t.deepEqual(await up.request({ url: 'http://hang.invalid/' }), { type: 'failed', reason: REASON.connectTimeout });
  } finally {
    await up.close();
  }
});

/** Whether `command args` runs here (the tools two tests need to build their fixtures). */
function toolAvailable(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}
const HAS_PYTHON3 = toolAvailable('python3', ['--version']);
const HAS_OPENSSL = toolAvailable('openssl', ['version']);

/**
 * Registers a test that needs `tool`. Without it the test fails naming the tool: a test that cannot run is never
 * skipped, so a passing run has run every test.
 */
function testNeeding(tool: string, available: boolean, title: string, impl: (t: ExecutionContext) => Promise<void>) {
  if (available) test(title, impl);
  else test(title, (t) => t.fail(`${tool} is not installed (apt-get install ${tool}); this test needs it`));
}

/**
 * A listener whose accept queue is full: the kernel drops further SYNs, so connect() hangs until our timeout.
 * node:net always accepts, so the listener is a python3 socket with backlog 0 that never calls accept().
 */
async function fullBacklogListener(): Promise<{ port: number; fillers: Socket[]; stop: () => void } | undefined> {
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn('python3', [
      '-c',
      'import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)',
    ]);
  } catch {
    return undefined;
  }
  const line = await new Promise<string | undefined>((resolve) => {
    child.on('error', () => resolve(undefined));
    child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim()));
    setTimeout(() => resolve(undefined), 60_000); // a loaded machine starts python slowly
  });
  if (line === undefined || !/^[0-9]+$/.test(line)) {
    child.kill();
    return undefined;
  }
  const port = Number(line);
  const fillers: Socket[] = [];
  for (let i = 0; i < 4; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => {});
    fillers.push(s);
  }
  await new Promise((r) => setTimeout(r, 200));
  return {
    port,
    fillers,
    stop: () => {
      for (const s of fillers) s.destroy();
      child.kill();
    },
  };
}

testNeeding('python3', HAS_PYTHON3, 'connect timeout: a listener with a full backlog', async (t) => {
  const listener = await fullBacklogListener();
  if (listener === undefined) {
    t.fail('python3 is installed but did not start a full-backlog listener');
    return;
  }
  const up = upstream({ connectTimeoutMs: 300, headersTimeoutMs: 5000 });
  try {
    const r = await up.request({ url: `http://127.0.0.1:${listener.port}/` });
    t.deepEqual(r, { type: 'failed', reason: REASON.connectTimeout });
  } finally {
    await up.close();
    listener.stop();
  }
});

/** A self-signed certificate for `name` (openssl), or undefined when openssl is missing. */
function selfSigned(name: string): { key: string; cert: string } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'payroute-tls-'));
  try {
    const { keyPath, certPath } = writeSelfSigned(dir, name, `DNS:${name}`, 1);
    return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

testNeeding(
  'openssl',
  HAS_OPENSSL,
  'https: SNI and certificate checked against the name while connecting to the resolved address',
  async (t) => {
    const pair = selfSigned('merchant.test');
    if (pair === undefined) {
      t.fail('openssl is installed but did not make a self-signed certificate');
      return;
    }
    let sni: string | false | null | undefined;
    const tls = createHttpsServer(pair, (req, res) => {
      sni = (req.socket as TLSSocket).servername;
      res.end('secure');
    });
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    const port = (tls.address() as AddressInfo).port;
    const resolver: Resolver = { lookup: async () => [{ address: '127.0.0.1', family: 4 }] };
    const trusted = upstream({ resolver, ca: pair.cert });
    const untrusted = upstream({ resolver });
    try {
      const ok = await trusted.request({ url: `https://merchant.test:${port}/` });
      t.is(ok.type, 'response');
      if (ok.type === 'response') t.is(ok.body.toString(), 'secure');
      t.is(sni, 'merchant.test');

      const wrongName = await trusted.request({ url: `https://other.test:${port}/` });
      t.deepEqual(
        wrongName,
        { type: 'failed', reason: REASON.tlsFailed },
        'the certificate is checked against the name',
      );
      const byIp = await trusted.request({ url: `https://127.0.0.1:${port}/` });
      t.deepEqual(byIp, { type: 'failed', reason: REASON.tlsFailed }, 'an IP target is checked against the IP');
      const noCa = await untrusted.request({ url: `https://merchant.test:${port}/` });
      t.deepEqual(noCa, { type: 'failed', reason: REASON.tlsFailed });
    } finally {
      await trusted.close();
      await untrusted.close();
      tls.closeAllConnections();
      tls.close();
    }
  },
);

test('options are validated when the upstream is created', (t) => {
  t.throws(() => createUpstream({ allowPrivate: false, maxBodyBytes: 0 }), { message: /maxBodyBytes/ });
  t.throws(() => createUpstream({ allowPrivate: false, maxHeaderBytes: 0.5 }), { message: /maxHeaderBytes/ });
  t.throws(() => createUpstream({ allowPrivate: false, connectTimeoutMs: -1, maxTotalMs: 1.5 }), {
    message: /connectTimeoutMs.*maxTotalMs/,
  });
});
