// The limits of POST /oauth/device_authorization (RFC 8628 §3.1, public): per client address (an IPv6 address by
// its /64) and per client, in fixed windows counted in the database, so they hold across processes; past either,
// 429 `temporarily_unavailable` with Retry-After and nothing stored. The client address is the one the proxy vouches
// for (a client's X-Forwarded-For and a forged vouching header are ignored; TRUSTED_PROXY_HOPS believes the hops
// the operator runs), else the admin port's own peer. And the purge: a device code nobody used is deleted once it
// expired, a polled one an hour later, a decided one a day later. On SQLite and PostgreSQL.
//
// The stack runs with small limits (3 per address, 5 per client). Each test takes buckets of its own (its own
// connector, and addresses from the documentation ranges vouched for with the stack's key on the admin port), except
// the one about the proxy, which alone uses 127.0.0.1. Serial: the purge test moves the clock of the whole database.
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { CLIENT_ADDRESS_HEADER, normalizeAddress, stampClientAddress } from '../../shared/client-address.js';
import { OAuthDeviceCode, OAuthDeviceRate } from '../../shared/db/entities/index.js';
import { startDeviceAuthorization } from '../../shared/oauth/device-authorization.js';
import { DeviceRateLimited, takeDeviceAuthorization } from '../../shared/oauth/device-rate-limit.js';
import { purgeOAuth } from '../../shared/oauth/purge.js';
import { forEachDb } from '../support/matrix.js';
import { connector } from '../support/oauth.js';

const PER_ADDRESS = 3;
const PER_CLIENT = 5;
const WINDOW_SECS = 600;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachDb(
  ({ kind, stack, test }) => {
    /**
     * A device authorization sent to `base` (a proxy or an admin port). `vouched`: the client address the proxy
     * would vouch for, signed with the stack's key as the proxy signs it (sent straight to an admin port).
     */
    async function start(
      base: string,
      clientId: string,
      opts: { vouched?: string; headers?: Record<string, string> } = {},
    ): Promise<Answer> {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (opts.vouched !== undefined) {
        const address = normalizeAddress(opts.vouched);
        if (address === undefined) throw new Error(`not an address: ${opts.vouched}`);
        headers[CLIENT_ADDRESS_HEADER] = stampClientAddress(stack().ctx.box, address);
      }
      const r = await fetch(`${base}/oauth/device_authorization`, {
        method: 'POST',
        headers: { ...headers, ...opts.headers },
        body: new URLSearchParams({ client_id: clientId, scope: 'commerce' }).toString(),
        signal: AbortSignal.timeout(120_000),
      });
      const text = await r.text();
      return { status: r.status, body: JSON.parse(text) as Record<string, unknown>, headers: r.headers };
    }
    const newClient = async () => (await connector(stack())).registration.clientId;
    const codesOf = (clientId: string) => stack().ctx.db.em().count(OAuthDeviceCode, { clientId });

    /** A refusal past a limit: 429, the RFC 6749 body naming the bucket, Retry-After within the window. */
    function isLimited(a: Answer, bucket: 'address' | 'client', windowSecs = WINDOW_SECS): string[] {
      const retryAfter = Number(a.headers.get('retry-after'));
      return [
        ...(a.status === 429 ? [] : [`status ${a.status} ${JSON.stringify(a.body)}`]),
        ...(a.body.error === 'temporarily_unavailable' ? [] : [`error ${String(a.body.error)}`]),
        ...(String(a.body.error_description).startsWith(`too many device authorizations from this ${bucket}: try again`)
          ? []
          : [`description ${String(a.body.error_description)}`]),
        ...(Object.keys(a.body).sort().join() === 'error,error_description' ? [] : ['extra fields']),
        ...(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSecs
          ? []
          : [`retry-after ${a.headers.get('retry-after')}`]),
        ...(a.headers.get('cache-control') === 'no-store' ? [] : ['cache-control']),
      ];
    }

    test('the (N+1)th from one address is 429 temporarily_unavailable with Retry-After and stores nothing; other addresses, and other clients from them, are unaffected', async (t) => {
      const s = stack();
      const c1 = await newClient();
      const c2 = await newClient();
      for (let i = 0; i < PER_ADDRESS; i++)
        t.is((await start(s.adminUrl, c1, { vouched: '203.0.113.10' })).status, 200);
      const refused = await start(s.adminUrl, c1, { vouched: '203.0.113.10' });
      t.deepEqual(isLimited(refused, 'address'), []);
      t.is(await codesOf(c1), PER_ADDRESS, 'the refused request stored no device code');
      // The address is limited whatever the client; another address is not.
      t.deepEqual(isLimited(await start(s.adminUrl, c2, { vouched: '203.0.113.10' }), 'address'), []);
      t.is(await codesOf(c2), 0);
      t.is((await start(s.adminUrl, c1, { vouched: '203.0.113.11' })).status, 200);
      t.is((await start(s.adminUrl, c2, { vouched: '203.0.113.11' })).status, 200);
      // Refusals count nothing: the address's window still holds exactly its 3.
      const bucket = await s.ctx.db.em().findOneOrFail(OAuthDeviceRate, { bucket: 'address:203.0.113.10' });
      t.is(bucket.used, PER_ADDRESS);

      // IPv6 counts by /64: any address of the block shares its window, the next block has its own.
      const c3 = await newClient();
      for (const a of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff'])
        t.is((await start(s.adminUrl, c3, { vouched: a })).status, 200, a);
      t.deepEqual(isLimited(await start(s.adminUrl, c3, { vouched: '2001:DB8:1:2:0:0:0:9' }), 'address'), []);
      t.is((await start(s.adminUrl, c3, { vouched: '2001:db8:1:3::1' })).status, 200);
      // An IPv4-mapped IPv6 address is its IPv4 address.
      t.deepEqual(isLimited(await start(s.adminUrl, c3, { vouched: '::ffff:203.0.113.10' }), 'address'), []);
    });

    test('per client: the (N+1)th from any address is 429 and stores nothing; another client from that address is unaffected', async (t) => {
      const s = stack();
      const c = await newClient();
      const other = await newClient();
      for (let i = 0; i < PER_CLIENT; i++)
        t.is((await start(s.adminUrl, c, { vouched: `198.51.100.${10 + i}` })).status, 200);
      const refused = await start(s.adminUrl, c, { vouched: '198.51.100.99' });
      t.deepEqual(isLimited(refused, 'client'), []);
      t.is(await codesOf(c), PER_CLIENT);
      // The refused request gave its address's count back: the address still has all but none used.
      t.is(await s.ctx.db.em().count(OAuthDeviceRate, { bucket: 'address:198.51.100.99' }), 0);
      t.is((await start(s.adminUrl, other, { vouched: '198.51.100.99' })).status, 200);
      t.is(await codesOf(other), 1);
    });

    test("the proxy vouches for the client address: a client's X-Forwarded-For and forged vouching header are ignored; the admin port counts its own peer", async (t) => {
      const s = stack();
      const c = await newClient();
      const forged = { [CLIENT_ADDRESS_HEADER]: `203.0.113.77 ${'A'.repeat(43)}` };
      // Through the proxy (the front door), each with another claimed address: all count as 127.0.0.1.
      for (let i = 0; i < PER_ADDRESS; i++) {
        const r = await start(s.proxyUrl, c, { headers: { 'x-forwarded-for': `192.0.2.${i + 1}`, ...forged } });
        t.is(r.status, 200, JSON.stringify(r.body));
      }
      t.deepEqual(
        isLimited(await start(s.proxyUrl, c, { headers: { 'x-forwarded-for': '192.0.2.200' } }), 'address'),
        [],
      );
      // Straight to the admin port: X-Forwarded-For and a header not signed with the deployment's key count for
      // nothing; the admin counts its own peer, the same 127.0.0.1.
      for (const headers of [{}, { 'x-forwarded-for': '192.0.2.201' }, forged]) {
        t.deepEqual(isLimited(await start(s.adminUrl, c, { headers }), 'address'), [], JSON.stringify(headers));
      }
      t.is(await codesOf(c), PER_ADDRESS);

      // A proxy told that one reverse proxy of the operator's stands in front of it believes the entry that proxy
      // appended (the last), never the ones before it.
      const behind = await s.spawn('proxy', { TRUSTED_PROXY_HOPS: '1' });
      const c2 = await newClient();
      for (let i = 0; i < PER_ADDRESS; i++) {
        const r = await start(behind.url, c2, { headers: { 'x-forwarded-for': `192.0.2.${i + 50}, 198.51.100.200` } });
        t.is(r.status, 200, JSON.stringify(r.body));
      }
      t.deepEqual(
        isLimited(await start(behind.url, c2, { headers: { 'x-forwarded-for': '198.51.100.200' } }), 'address'),
        [],
      );
      t.is((await start(behind.url, c2, { headers: { 'x-forwarded-for': '1.1.1.1, 198.51.100.201' } })).status, 200);
      // No entry, or one that is no address: the proxy's own peer (127.0.0.1, used up above).
      for (const xff of [undefined, 'not-an-address'])
        t.deepEqual(
          isLimited(
            await start(behind.url, c2, xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } }),
            'address',
          ),
          [],
          String(xff),
        );
      await behind.stop();
    });

    test('after the window the limit resets (a 2 s window)', async (t) => {
      const s = stack();
      const c = await newClient();
      const admin = await s.spawn('admin', { OAUTH_DEVICE_AUTH_WINDOW_SECS: '2' });
      const address = '203.0.113.50';
      // Until refused (at most the limit, unless a slow machine saw the window end meanwhile: then again).
      let refused: Answer | undefined;
      for (let i = 0; i < 50 && refused === undefined; i++) {
        const r = await start(admin.url, c, { vouched: address });
        if (r.status === 429) refused = r;
        else t.is(r.status, 200);
      }
      if (refused === undefined) return t.fail('never refused');
      t.deepEqual(isLimited(refused, 'address', 2), []);
      // Retry-After is what the window has left, rounded up: past it, the window is over.
      await sleep(Number(refused.headers.get('retry-after')) * 1000 + 50);
      const again = await start(admin.url, c, { vouched: address });
      t.is(again.status, 200, JSON.stringify(again.body));
      await admin.stop();
    });

    test('parallel device authorizations against the limits through two admin processes: exactly the limit is stored', async (t) => {
      const s = stack();
      const second = await s.spawn('admin');
      const admins = [s.adminUrl, second.url];
      const M = 40;
      // One address, one client: the address's 3.
      const c = await newClient();
      const oneAddress = await Promise.all(
        Array.from({ length: M }, (_, i) => start(admins[i % 2] ?? '', c, { vouched: '203.0.113.90' })),
      );
      t.deepEqual(
        oneAddress.filter((a) => a.status !== 200 && isLimited(a, 'address').length > 0).map((a) => a.status),
        [],
      );
      t.is(oneAddress.filter((a) => a.status === 200).length, PER_ADDRESS);
      t.is(await codesOf(c), PER_ADDRESS);
      // One client from M addresses: the client's 5.
      const c2 = await newClient();
      const oneClient = await Promise.all(
        Array.from({ length: M }, (_, i) => start(admins[i % 2] ?? '', c2, { vouched: `2001:db8:90:${i}::1` })),
      );
      t.deepEqual(
        oneClient.filter((a) => a.status !== 200 && isLimited(a, 'client').length > 0).map((a) => a.status),
        [],
      );
      t.is(oneClient.filter((a) => a.status === 200).length, PER_CLIENT);
      t.is(await codesOf(c2), PER_CLIENT);
      // The refused ones left no count behind: the used addresses are exactly the admitted ones.
      t.is(await s.ctx.db.em().count(OAuthDeviceRate, { bucket: { $like: 'address:2001:db8:90:%' } }), PER_CLIENT);
      t.log(`${kind}: ${M} parallel, ${PER_ADDRESS} and ${PER_CLIENT} stored`);
      await second.stop();
    });

    test('a request whose clock read earlier than the parallel one that opened the window is told at most one window', async (t) => {
      // Two processes' requests race for one bucket: the later-read clock opens the window while the earlier one
      // waits on the row. Its Retry-After is never more than the window itself.
      const s = stack();
      const limits = { perAddress: 1, perClient: 100, windowSecs: 600 };
      const who = { addressBucket: '198.51.100.77', clientId: await newClient() };
      const opener = new Date();
      await s.ctx.db.sql.transaction((tx) => takeDeviceAuthorization(tx, who, limits, opener));
      const earlier = new Date(opener.getTime() - 1500);
      const err = await t.throwsAsync(
        s.ctx.db.sql.transaction((tx) => takeDeviceAuthorization(tx, who, limits, earlier)),
        { instanceOf: DeviceRateLimited },
      );
      t.is(err?.bucket, 'address');
      t.is(err?.retryAfterSecs, 600);
    });

    test('the purge: a never-used device code once expired, a polled one an hour later, a decided or redeemed one a day later; rate windows once over', async (t) => {
      const s = stack();
      const em = s.ctx.db.em();
      const clientId = await newClient();
      const codes: Record<string, string> = {};
      for (const [i, name] of ['unused', 'polled', 'approved', 'denied', 'redeemed'].entries()) {
        const r = await startDeviceAuthorization(
          s.ctx,
          { client_id: clientId, scope: 'commerce' },
          `192.0.2.${100 + i}`,
        );
        codes[name] = sha256Hex(r.device_code);
      }
      const hash = (name: string) => codes[name] ?? '';
      const now = new Date();
      await em.nativeUpdate(OAuthDeviceCode, { deviceCodeHash: hash('polled') }, { lastPolledAt: now });
      for (const status of ['approved', 'denied', 'redeemed'] as const)
        await em.nativeUpdate(OAuthDeviceCode, { deviceCodeHash: hash(status) }, { status });
      const { expiresAt } = await em.findOneOrFail(OAuthDeviceCode, { deviceCodeHash: hash('unused') });
      const left = async () =>
        (await s.ctx.db.em().find(OAuthDeviceCode, { clientId })).map((r) => r.deviceCodeHash).sort();
      const named = (...names: string[]) => names.map(hash).sort();
      const at = (ms: number) => new Date(expiresAt.getTime() + ms);

      // The rate windows these codes took: kept while their window runs.
      const windows = () => s.ctx.db.em().count(OAuthDeviceRate, { bucket: { $like: 'address:192.0.2.1%' } });
      await purgeOAuth(s.ctx, now);
      t.is(await windows(), 5);

      await purgeOAuth(s.ctx, at(-1000));
      t.deepEqual(await left(), named('unused', 'polled', 'approved', 'denied', 'redeemed'), 'all alive');
      await purgeOAuth(s.ctx, at(1000));
      t.deepEqual(await left(), named('polled', 'approved', 'denied', 'redeemed'), 'never used: gone at expiry');
      await purgeOAuth(s.ctx, at(3_600_000 - 1000));
      t.deepEqual(await left(), named('polled', 'approved', 'denied', 'redeemed'));
      await purgeOAuth(s.ctx, at(3_600_000 + 1000));
      t.deepEqual(await left(), named('approved', 'denied', 'redeemed'), 'polled, undecided: an hour past expiry');
      await purgeOAuth(s.ctx, at(86_400_000 - 1000));
      t.deepEqual(await left(), named('approved', 'denied', 'redeemed'));
      await purgeOAuth(s.ctx, at(86_400_000 + 1000));
      t.deepEqual(await left(), [], 'decided: a day past expiry');

      // The rate windows these codes took, deleted once over (every purge above was past them).
      t.is(await windows(), 0);
    });
  },
  {
    OAUTH_DEVICE_AUTH_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
    OAUTH_DEVICE_AUTH_LIMIT_PER_CLIENT: String(PER_CLIENT),
    OAUTH_DEVICE_AUTH_WINDOW_SECS: String(WINDOW_SECS),
  },
  { serial: true },
);
