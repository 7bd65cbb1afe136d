// The streaming proxy (ALL /api/v1/router/proxy) at its edges, on a stack whose users may have ONE call in flight
// (ROUTER_MAX_CONCURRENT_PER_USER=1), so a call that never ends shows as a 429 on the next: a caller who leaves
// before the answer is relayed frees its slot and is never paid for; an answer (paid or free) that breaks off or
// stalls before its first byte is a 502 (naming the payment if there is one), never a reset without a status; a
// 304 with a Content-Length is relayed as a 304, a 204 without one, a 205 without content; a transfer coding other
// than chunked is refused; the merchant cannot set our correlation id or pass a proxy's authentication info on.
import test from 'ava';
import { forEachDb } from '../support/matrix.js';
import type { Running } from '../support/merchants/listen.js';
import { rawMerchant } from '../support/merchants/raw-http.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  type User,
  paymentRows,
  scriptedMerchant,
  startMerchants,
  payingUser,
} from '../support/router-fixtures.js';

const PRICE = 10_000n;
let m: Merchants;
/**
 * /slow: 200 after 800 ms; /slow402: the v2 merchant's 402 after 800 ms; /cut: 402, then the paid hop's headers and
 * a reset; /cut-later: 402, then the paid hop's headers, some of its body and a reset; /free-cut: 200 headers and a
 * reset; /late: 200 headers, the body 200 ms later; /stall: 200 headers, then nothing; /304; /headers.
 */
let edge: ScriptedMerchant;
/** Answers node:http will not write: /204 and /205 with a Content-Length, /gzip-chunked and /gzip transfer codings. */
let raw: Running;
/** The outbound idle timeout of this stack: a body that stalls longer fails. */
const IDLE_MS = 1000;

test.before(async () => {
  m = await startMerchants(PRICE);
  const required = (await fetch(m.v2.url + m.v2.paidPath)).headers.get('payment-required') ?? '';
  edge = await scriptedMerchant(async (req, res) => {
    const paid = req.headers['payment-signature'] !== undefined;
    if (req.url === '/slow') {
      await new Promise((r) => setTimeout(r, 800));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"slow":true}');
    } else if (req.url === '/slow402') {
      await new Promise((r) => setTimeout(r, 800));
      res.writeHead(402, { 'payment-required': required });
      res.end('{}');
    } else if (req.url === '/cut' && !paid) {
      res.writeHead(402, { 'payment-required': required });
      res.end('{}');
    } else if (req.url === '/cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.flushHeaders();
      setImmediate(() => res.socket?.destroy());
    } else if (req.url === '/cut-later' && !paid) {
      res.writeHead(402, { 'payment-required': required });
      res.end('{}');
    } else if (req.url === '/cut-later') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 300);
    } else if (req.url === '/free-cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.flushHeaders();
      setImmediate(() => res.socket?.destroy());
    } else if (req.url === '/late') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      await new Promise((r) => setTimeout(r, 200));
      res.write('{"late":');
      await new Promise((r) => setTimeout(r, 50));
      res.end('true}');
    } else if (req.url === '/stall') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders(); // and nothing more: the outbound idle timeout ends it
    } else if (req.url === '/304') {
      res.writeHead(304, { etag: '"v1"', 'content-length': '1234' });
      res.end();
    } else {
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-correlation-id': 'merchant-chosen',
        'proxy-authentication-info': 'nextnonce="abc"',
      });
      res.end('{"ok":true}');
    }
  });
  const close = 'connection: close\r\n';
  raw = await rawMerchant({
    '/204': `HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n${close}\r\n`,
    '/205': `HTTP/1.1 205 Reset Content\r\ncontent-length: 3\r\n${close}\r\nabc`,
    '/gzip-chunked': `HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n${close}\r\n3\r\nabc\r\n0\r\n\r\n`,
    '/gzip': `HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n${close}\r\nabcdef`,
  });
});
test.after.always(async () => {
  await Promise.all([m?.close(), edge?.close(), raw?.close()]);
});

let n = 0;
const rid = () => `edge-${Date.now()}-${++n}`;

forEachDb(
  ({ stack, test }) => {
    const paidUser = () => payingUser(stack(), m.chain, 100_000_000n, 1000);
    const hdrs = (u: User, path: string, delegationId: string, merchant: { url: string } = edge) => ({
      authorization: `Bearer ${u.apiKey}`,
      'x-router-target-url': `${merchant.url}${path}`,
      'x-router-delegation-id': delegationId,
      'x-router-request-id': rid(),
    });
    /** One call through the proxy; `text` is undefined when the body broke off after the status line. */
    const proxied = async (u: User, path: string, delegationId: string, merchant: { url: string } = edge) => {
      const r = await fetch(`${stack().proxyUrl}/api/v1/router/proxy`, {
        headers: hdrs(u, path, delegationId, merchant),
      });
      const text = await r.text().catch(() => undefined);
      return { status: r.status, headers: r.headers, text };
    };
    /** The error envelope of a 502 from relay(): the merchant's answer broke off before anything was relayed. */
    const brokeOff = (ids: { paymentId: string } | Record<string, never>) => ({
      ...ids,
      code: 'BCK.HTTP.0502',
      httpStatus: 502,
      error: 'Bad Gateway',
      details: "the merchant's answer broke off",
      params: JSON.stringify(ids),
      retryable: true,
    });
    /** A call the caller gives up on after `ms`. */
    const abandon = async (u: User, path: string, delegationId: string, ms: number) => {
      await fetch(`${stack().proxyUrl}/api/v1/router/proxy`, {
        headers: hdrs(u, path, delegationId),
        signal: AbortSignal.timeout(ms),
      }).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
    };
    /** The user's one slot is free again: a free call goes through (within a few seconds). */
    const slotFree = async (u: User, delegationId: string): Promise<number> => {
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await u.api.call('GET', '/router/proxy', undefined, hdrs(u, '/headers', delegationId))).status;
      }
      return status;
    };

    test('a caller gone before the answer arrives frees its slot', async (t) => {
      const { u, delegationId } = await paidUser();
      await abandon(u, '/slow', delegationId, 150);
      t.is(await slotFree(u, delegationId), 200);
    });

    test('a caller gone before the 402 arrives is never paid for, and frees its slot', async (t) => {
      const { u, delegationId } = await paidUser();
      await abandon(u, '/slow402', delegationId, 150);
      t.is(await slotFree(u, delegationId), 200);
      await new Promise((r) => setTimeout(r, 1_000)); // past the merchant's 800 ms
      t.is((await paymentRows(stack(), u.userId)).length, 0, 'no payment for a caller who left');
    });

    test('a paid answer that breaks off before its first byte: 502 naming the payment; the slot is freed', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, '/cut', delegationId);
      const rows = await paymentRows(stack(), u.userId);
      t.is(rows.length, 1);
      const paymentId = rows[0]?.id ?? '';
      t.is(r.status, 502, r.text);
      t.like(JSON.parse(r.text ?? 'null'), brokeOff({ paymentId }));
      t.is(await slotFree(u, delegationId), 200);
    });

    test('a paid answer that breaks off after some of its body: 502 naming the payment, or a cut 200 carrying X-Router-Payment-Id', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, '/cut-later', delegationId);
      const rows = await paymentRows(stack(), u.userId);
      t.is(rows.length, 1);
      const paymentId = rows[0]?.id ?? '';
      if (r.status === 502) {
        // The body failed during the payment's bookkeeping, before relay() began: nothing was sent yet.
        t.like(JSON.parse(r.text ?? 'null'), brokeOff({ paymentId }));
      } else {
        t.is(r.status, 200);
        t.is(r.headers.get('x-router-payment-id'), paymentId);
        t.is(r.text, undefined, 'the body is cut: 11 of the 100,000 declared bytes');
      }
      t.is(await slotFree(u, delegationId), 200);
    });

    test('a free answer that breaks off before its first byte: 502, no payment; the slot is freed', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, '/free-cut', delegationId);
      t.is(r.status, 502, r.text);
      const body = JSON.parse(r.text ?? 'null') as Record<string, unknown>;
      t.like(body, brokeOff({}));
      t.false('paymentId' in body);
      t.is(r.headers.get('x-router-payment-id'), null);
      t.is((await paymentRows(stack(), u.userId)).length, 0);
      t.is(await slotFree(u, delegationId), 200);
    });

    test('a free answer whose body starts after its headers is relayed whole', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, '/late', delegationId);
      t.is(r.status, 200);
      t.is(r.headers.get('content-type'), 'application/json');
      t.is(r.text, '{"late":true}');
    });

    test('a free answer that stalls after its headers: 502 once the outbound idle timeout ends it, not a reset', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await proxied(u, '/stall', delegationId);
      t.is(r.status, 502, r.text);
      t.like(JSON.parse(r.text ?? 'null'), brokeOff({}));
      t.is(await slotFree(u, delegationId), 200);
    });

    test('a 204 with a Content-Length is relayed without one; a 205 with one, as Content-Length: 0 and no content', async (t) => {
      const { u, delegationId } = await paidUser();
      const noContent = await proxied(u, '/204', delegationId, raw);
      t.is(noContent.status, 204);
      t.is(noContent.headers.get('content-length'), null);
      t.is(noContent.text, '');
      const reset = await proxied(u, '/205', delegationId, raw);
      t.is(reset.status, 205);
      t.is(reset.headers.get('content-length'), '0');
      t.is(reset.text, '');
    });

    test('a transfer coding other than chunked is refused: 502 invalid upstream response', async (t) => {
      const { u, delegationId } = await paidUser();
      for (const path of ['/gzip-chunked', '/gzip']) {
        const r = await proxied(u, path, delegationId, raw);
        t.is(r.status, 502, path);
        t.like(JSON.parse(r.text ?? 'null'), {
          code: 'BCK.HTTP.0502',
          details: 'The merchant could not be reached: invalid upstream response',
          params: JSON.stringify({ reason: 'invalid upstream response' }),
        });
      }
    });

    test('a 304 with a Content-Length is relayed as a 304', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await fetch(`${stack().proxyUrl}/api/v1/router/proxy`, { headers: hdrs(u, '/304', delegationId) });
      t.is(r.status, 304);
      t.is(r.headers.get('etag'), '"v1"');
      t.is((await r.arrayBuffer()).byteLength, 0);
    });

    test('the merchant cannot set our correlation id or pass Proxy-Authentication-Info on', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await u.api.call('GET', '/router/proxy', undefined, {
        ...hdrs(u, '/headers', delegationId),
        'x-correlation-id': 'caller-1',
      });
      t.is(r.status, 200, r.text);
      t.is(r.headers.get('x-correlation-id'), 'caller-1');
      t.is(r.headers.get('proxy-authentication-info'), null);
    });
  },
  { ...PAID_ENV, ROUTER_MAX_CONCURRENT_PER_USER: '1', ROUTER_STREAM_IDLE_MS: String(IDLE_MS) },
);
