// The outbound client on answers framed oddly, written byte for byte by a node:net merchant (raw-http.ts), so
// what is asserted is what undici hands the exchange, not what node:http would have sent: Content-Length on a
// 204 is dropped (RFC 9110 §8.6), a 205 is relayed without content (RFC 9110 §15.3.6), and a transfer coding
// other than chunked (RFC 9112 §6.1) is refused as an invalid upstream response, like a repeated Content-Length.
import test from 'ava';
import { createUpstream } from '../../shared/upstream/client.js';
import { REASON } from '../../shared/upstream/reasons.js';
import { upstreamAppError } from '../../shared/upstream/to-app-error.js';
import type { Running } from '../support/merchants/listen.js';
import { rawMerchant } from '../support/merchants/raw-http.js';

const CLOSE = 'connection: close\r\n';
const ANSWERS: Record<string, string> = {
  '/204-length': `HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n${CLOSE}\r\n`,
  '/204-length-junk': `HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n${CLOSE}\r\nhello`,
  '/304-length': `HTTP/1.1 304 Not Modified\r\netag: "v1"\r\ncontent-length: 1234\r\n${CLOSE}\r\n`,
  '/205-content': `HTTP/1.1 205 Reset Content\r\ncontent-length: 3\r\n${CLOSE}\r\nabc`,
  '/205-promised': 'HTTP/1.1 205 Reset Content\r\ncontent-length: 3\r\n\r\n',
  '/205-until-close': `HTTP/1.1 205 Reset Content\r\n${CLOSE}\r\nxyz`,
  '/205-empty': `HTTP/1.1 205 Reset Content\r\ncontent-length: 0\r\n${CLOSE}\r\n`,
  '/chunked': `HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n${CLOSE}\r\n3\r\nabc\r\n0\r\n\r\n`,
  '/gzip-chunked': `HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n${CLOSE}\r\n3\r\nabc\r\n0\r\n\r\n`,
  '/gzip-then-chunked-fields': `HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ntransfer-encoding: chunked\r\n${CLOSE}\r\n3\r\nabc\r\n0\r\n\r\n`,
  '/gzip': `HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n${CLOSE}\r\nabcdef`,
  '/chunked-gzip': `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n${CLOSE}\r\nabcdef`,
  '/identity': `HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\n${CLOSE}\r\nabc`,
  '/chunked-twice': `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, chunked\r\n${CLOSE}\r\n3\r\nabc\r\n0\r\n\r\n`,
  '/gzip-with-length': `HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ncontent-length: 3\r\n${CLOSE}\r\nabc`,
  '/two-lengths': `HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n${CLOSE}\r\nabcd`,
};

let merchant: Running;

test.before(async () => {
  merchant = await rawMerchant(ANSWERS, ['/205-promised']);
});
test.after.always(async () => {
  await merchant?.close();
});

/** Short timeouts: an answer that waited for bytes that never come would fail with 'idle timeout', not pass. */
const upstream = () =>
  createUpstream({
    allowPrivate: true,
    connectTimeoutMs: 2000,
    headersTimeoutMs: 2000,
    bodyTimeoutMs: 2000,
    maxTotalMs: 10_000,
  });

async function fetchRaw(path: string) {
  const up = upstream();
  try {
    const r = await up.request({ url: merchant.url + path });
    return r.type === 'response' ? { ...r, body: r.body.toString('latin1') } : r;
  } finally {
    await up.close();
  }
}

test('a 204 with a Content-Length: relayed without one, and without content', async (t) => {
  t.deepEqual(await fetchRaw('/204-length'), { type: 'response', status: 204, headers: {}, body: '' });
  t.deepEqual(await fetchRaw('/204-length-junk'), { type: 'response', status: 204, headers: {}, body: '' });
});

test("a 304's Content-Length is the representation's size: kept", async (t) => {
  t.deepEqual(await fetchRaw('/304-length'), {
    type: 'response',
    status: 304,
    headers: { etag: '"v1"', 'content-length': '1234' },
    body: '',
  });
});

test('a 205 is relayed with Content-Length: 0 and no content, whatever the merchant declared or sent', async (t) => {
  const reset = { type: 'response', status: 205, headers: { 'content-length': '0' }, body: '' };
  t.deepEqual(await fetchRaw('/205-content'), reset, 'declared and sent: not relayed');
  t.deepEqual(
    await fetchRaw('/205-promised'),
    reset,
    'declared, never sent (the connection stays open): not waited for',
  );
  t.deepEqual(await fetchRaw('/205-until-close'), reset, 'content until the connection closes: not relayed');
  t.deepEqual(await fetchRaw('/205-empty'), reset);
});

test('chunked (any case) is framing: removed, the content relayed', async (t) => {
  t.deepEqual(await fetchRaw('/chunked'), { type: 'response', status: 200, headers: {}, body: 'abc' });
});

test('a transfer coding other than chunked is refused as an invalid upstream response (502), as a repeated Content-Length is', async (t) => {
  const invalid = { type: 'failed', reason: REASON.invalidResponse };
  for (const path of [
    '/gzip-chunked',
    '/gzip-then-chunked-fields',
    '/gzip',
    '/chunked-gzip',
    '/identity',
    '/chunked-twice',
    '/gzip-with-length',
    '/two-lengths',
  ]) {
    t.deepEqual(await fetchRaw(path), invalid, path);
  }
  const err = upstreamAppError({ type: 'failed', reason: REASON.invalidResponse });
  t.is(err.code, 'BCK.HTTP.0502');
  t.is(err.details, 'The merchant could not be reached: invalid upstream response');
});
