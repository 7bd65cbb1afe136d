// The streaming proxy (ALL /api/v1/router/proxy) at its edges, on a stack whose users may have ONE call in flight
// (ROUTER_MAX_CONCURRENT_PER_USER=1), so a call that never ends shows as a 429 on the next: a caller who leaves
// before the answer is relayed frees its slot and is never paid for; a paid answer that breaks off before it is
// relayed is a 502 naming the payment; a 304 with a Content-Length is relayed as a 304; the merchant cannot set
// our correlation id or pass a proxy's authentication info on.
import test from 'ava';
import { forEachDb } from './support/matrix.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  type User,
  createDelegation,
  fund,
  paymentRows,
  scriptedMerchant,
  startMerchants,
} from './support/router-fixtures.js';

const PRICE = 10_000n;
let m: Merchants;
/** /slow: 200 after 800 ms; /slow402: the v2 merchant's 402 after 800 ms; /cut: 402, then the paid hop's headers and a reset; /304; /headers. */
let edge: ScriptedMerchant;

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
});
test.after.always(async () => {
  await Promise.all([m?.close(), edge?.close()]);
});

let n = 0;
const rid = () => `edge-${Date.now()}-${++n}`;

forEachDb(
  ({ stack, test }) => {
    async function paidUser(): Promise<{ u: User; delegationId: string }> {
      const u = await stack().user();
      await fund(stack(), m.chain, u, 100_000_000n);
      return { u, delegationId: await createDelegation(u, 1000) };
    }
    const hdrs = (u: User, path: string, delegationId: string) => ({
      authorization: `Bearer ${u.apiKey}`,
      'x-router-target-url': `${edge.url}${path}`,
      'x-router-delegation-id': delegationId,
      'x-router-request-id': rid(),
    });
    /** A call the caller gives up on after `ms`. */
    const abandon = async (u: User, path: string, delegationId: string, ms: number) => {
      await fetch(`${stack().proxyUrl}/api/v1/router/proxy`, { headers: hdrs(u, path, delegationId), signal: AbortSignal.timeout(ms) }).then(
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

    test('a paid answer that breaks off before it is relayed: 502 naming the payment, or a cut connection; the slot is freed', async (t) => {
      const { u, delegationId } = await paidUser();
      const r = await u.api.call('GET', '/router/proxy', undefined, hdrs(u, '/cut', delegationId)).catch(() => undefined);
      const rows = await paymentRows(stack(), u.userId);
      t.is(rows.length, 1);
      if (r !== undefined && r.status === 502) {
        t.is(r.body.code, 'BCK.HTTP.0502');
        t.is(r.body.paymentId, rows[0]?.id);
      } else if (r !== undefined) {
        t.is(r.status, 200, 'headers already relayed: the body is cut');
      }
      t.is(await slotFree(u, delegationId), 200);
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
      const r = await u.api.call('GET', '/router/proxy', undefined, { ...hdrs(u, '/headers', delegationId), 'x-correlation-id': 'caller-1' });
      t.is(r.status, 200, r.text);
      t.is(r.headers.get('x-correlation-id'), 'caller-1');
      t.is(r.headers.get('proxy-authentication-info'), null);
    });
  },
  { ...PAID_ENV, ROUTER_MAX_CONCURRENT_PER_USER: '1' },
);
