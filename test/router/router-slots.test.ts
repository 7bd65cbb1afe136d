// The router's HTTP rules around a call (router flow steps 1-3, docs/architecture.md), on a stack whose users may have TWO calls in flight:
// a duplicate requestId waits for the first call's outcome without holding one of its user's slots; a JSON body
// over BODY_LIMIT_BYTES is refused unread (413); a route `body` is sent as JSON unless the caller names its own
// Content-Type; a wrong method gets 405 with the Allow header (RFC 9110 §15.5.6) and HEAD runs a GET route.
import test from 'ava';
import { forEachDb } from '../support/matrix.js';
import { PAID_ENV, type ScriptedMerchant, createDelegation, scriptedMerchant } from '../support/router-fixtures.js';

let merchant: ScriptedMerchant;
/** What the merchant received, by x-test-id: content type and body. */
const received = new Map<string, { type: string | undefined; body: string }>();

test.before(async () => {
  merchant = await scriptedMerchant(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const id = req.headers['x-test-id'];
    if (typeof id === 'string')
      received.set(id, { type: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') });
    if (req.url === '/slow') await new Promise((r) => setTimeout(r, 1500));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
});
test.after.always(async () => {
  await merchant?.close();
});

let n = 0;
const rid = () => `slot-${Date.now()}-${++n}`;

forEachDb(
  ({ stack, test }) => {
    test("a duplicate requestId waits for the first call without holding a slot: the user's other call still runs", async (t) => {
      const u = await stack().user();
      const delegationId = await createDelegation(u, 1000);
      const same = rid();
      const first = u.api.post('/router/route', { requestId: same, delegationId, url: `${merchant.url}/slow` });
      await new Promise((r) => setTimeout(r, 200));
      const duplicate = u.api.post('/router/route', { requestId: same, delegationId, url: `${merchant.url}/slow` });
      await new Promise((r) => setTimeout(r, 200));
      // Two slots: the first call holds one; the waiting duplicate gave its own back.
      const other = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${merchant.url}/fast` });
      t.is(other.status, 200, other.text);
      t.deepEqual(other.body, { status: 200, body: { ok: true }, paid: false });
      // One of the two ran (normally the first sent), the other was told the requestId is taken.
      const both = await Promise.all([first, duplicate]);
      t.deepEqual(both.map((r) => r.status).sort(), [200, 409], both.map((r) => r.text).join(' | '));
      t.is(both.find((r) => r.status === 409)?.body.code, 'BCK.ROUTER.0002');
    });

    test("waiting duplicates are bounded: past the user's waiting budget (its concurrency limit) a duplicate waits holding its slot", async (t) => {
      const u = await stack().user();
      const delegationId = await createDelegation(u, 1000);
      const same = rid();
      const first = u.api.post('/router/route', { requestId: same, delegationId, url: `${merchant.url}/slow` });
      await new Promise((r) => setTimeout(r, 200));
      // Limit 2: two duplicates wait without a slot, the third keeps its slot; with the first call that is both.
      const duplicates = [0, 1, 2].map(() =>
        u.api.post('/router/route', { requestId: same, delegationId, url: `${merchant.url}/slow` }),
      );
      await new Promise((r) => setTimeout(r, 300));
      const other = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${merchant.url}/fast` });
      t.is(other.status, 429, other.text);
      t.is(other.body.code, 'BCK.ROUTER.0007');
      const all = await Promise.all([first, ...duplicates]);
      t.deepEqual(all.map((r) => r.status).sort(), [200, 409, 409, 409]);
      // Once they are answered, the slots and the waiting budget are free again.
      const after = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${merchant.url}/fast` });
      t.is(after.status, 200, after.text);
    });

    test("a route JSON body over BODY_LIMIT_BYTES -> 413 BCK.HTTP.0413, and the user's slot is free again", async (t) => {
      const u = await stack().user();
      const delegationId = await createDelegation(u, 1000);
      const big = JSON.stringify({
        requestId: rid(),
        delegationId,
        url: `${merchant.url}/fast`,
        method: 'POST',
        body: 'a'.repeat(1_100_000),
      });
      const r = await u.api.raw('POST', '/router/route', big, { 'content-type': 'application/json' });
      t.is(r.status, 413, r.text);
      t.is(r.body.code, 'BCK.HTTP.0413');
      for (let i = 0; i < 3; i += 1) {
        const next = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${merchant.url}/fast` });
        t.is(next.status, 200, next.text);
      }
    });

    test('a route body is JSON unless the caller names its Content-Type: "abc" goes as "abc", a form as it is', async (t) => {
      const u = await stack().user();
      const delegationId = await createDelegation(u, 1000);
      const send = async (id: string, extra: Record<string, unknown>) => {
        const r = await u.api.post('/router/route', {
          requestId: rid(),
          delegationId,
          url: `${merchant.url}/fast`,
          method: 'POST',
          ...extra,
          headers: { 'x-test-id': id, ...((extra.headers as object | undefined) ?? {}) },
        });
        t.is(r.status, 200, r.text);
        return received.get(id);
      };
      t.deepEqual(await send(`s-${rid()}`, { body: 'abc' }), { type: 'application/json', body: '"abc"' });
      t.deepEqual(await send(`o-${rid()}`, { body: { a: [1, 2] } }), { type: 'application/json', body: '{"a":[1,2]}' });
      t.deepEqual(
        await send(`f-${rid()}`, { body: 'a=1&b=2', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
        {
          type: 'application/x-www-form-urlencoded',
          body: 'a=1&b=2',
        },
      );
      t.deepEqual(
        await send(`j-${rid()}`, { body: { a: 1 }, headers: { 'content-type': 'application/vnd.api+json' } }),
        {
          type: 'application/vnd.api+json',
          body: '{"a":1}',
        },
      );
    });

    test('405 carries Allow (RFC 9110 §15.5.6); HEAD runs a GET route without a body', async (t) => {
      const u = await stack().user();
      const del = await u.api.call('DELETE', '/router/payments');
      t.is(del.status, 405);
      t.is(del.body.code, 'BCK.HTTP.0405');
      t.is(del.headers.get('allow'), 'GET, HEAD, POST');
      const put = await u.api.call('PUT', '/router/route');
      t.is(put.status, 405);
      t.is(put.headers.get('allow'), 'POST');
      const head = await fetch(`${stack().baseUrl}/router/payments`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${u.apiKey}` },
      });
      t.is(head.status, 200);
      t.regex(head.headers.get('content-type') ?? '', /application\/json/);
      t.is(await head.text(), '');
    });
  },
  { ...PAID_ENV, ROUTER_MAX_CONCURRENT_PER_USER: '2' },
);
