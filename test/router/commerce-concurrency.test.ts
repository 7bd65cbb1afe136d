// Concurrency of the commerce route (POST /api/v1/router/commerce/route): a connector's parallel calls against its
// grant's cap, through TWO proxy processes on one PostgreSQL (one proxy on SQLite); parallel duplicates of one
// requestId in the grant's scope; a revocation of the binding, and the operator's disable of the connector, in the
// middle of a burst; and the per-user in-flight limit, shared by the user's API key and every grant of theirs.
//
// Nothing here measures time: the burst and the slots wait on what the merchants and the database report.
import test, { type ExecutionContext } from 'ava';
import { OAuthGrant, RouterPayment } from '../../shared/db/entities/index.js';
import { disableClient } from '../../shared/oauth/clients.js';
import { forEachDb } from '../support/matrix.js';
import { type GrantToken, codeGrant, connector, deviceGrant } from '../support/oauth.js';
import { waitUntil } from '../support/processes.js';
import {
  type Merchants,
  PAID_ENV,
  RACE_ENV,
  type ScriptedMerchant,
  createDelegation,
  delegationRow,
  delegationTransactions,
  fundedUser,
  ledgerBalance,
  paymentRows,
  scriptedMerchant,
  startMerchants,
} from '../support/router-fixtures.js';
import { type ApiClient, type ApiResponse, apiClient } from '../support/http.js';
import { raceProxies, startStack } from '../support/stack.js';

const PRICE = 10_000n; // x402: 500 atomic fee, cap charge 2 cents
const FUNDS = 1_000_000_000n;
const N = 100;
const K = 7;
const DUPES = 40;
const ROUTE = '/router/commerce/route';

let m: Merchants;
/** Holds a request carrying x-gate until the test opens the gates; answers 200 (free) to the rest at once. */
let slow: ScriptedMerchant;
let openGates: () => void = () => {};
const gatesOpen = new Promise<void>((r) => {
  openGates = r;
});

test.before(async () => {
  m = await startMerchants(PRICE);
  slow = await scriptedMerchant(async (req, res) => {
    if (req.headers['x-gate'] !== undefined)
      await Promise.race([gatesOpen, new Promise((r) => setTimeout(r, 120_000).unref())]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"slow":true}');
  });
});
test.after.always(async () => {
  openGates();
  await Promise.all([m?.close(), slow?.close()]);
});

let seq = 0;
const rid = (p: string) => `${p}-${Date.now()}-${++seq}`;

forEachDb(
  ({ kind, stack, test }) => {
    const proxies = () => raceProxies(stack());
    /** The grant's token presented to each proxy. */
    const clientsOf = async (g: GrantToken): Promise<ApiClient[]> =>
      (await proxies()).map((p) => apiClient(`${p}/api/v1`, g.token));

    const funded = () => fundedUser(stack(), m.chain, FUNDS);
    const grantRows = (grantId: string) => stack().ctx.db.em().find(RouterPayment, { grantId });

    test(`${N} parallel commerce calls against a grant whose cap fits exactly ${K}: ${K} paid, the rest 402 BCK.ROUTER.0003`, async (t) => {
      const s = stack();
      const u = await funded();
      const g = await codeGrant(s, u, { spending_limit_cents: 2 * K });
      const clients = await clientsOf(g);
      t.is(clients.length, kind === 'postgresql' ? 2 : 1);
      const url = m.v2.url + m.v2.paidPath;
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          (clients[i % clients.length] as ApiClient).post(ROUTE, { requestId: rid('cap'), url }),
        ),
      );
      t.deepEqual(
        results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => `${r.status} ${r.text}`),
        [],
        'only 200 and 402',
      );
      const ok = results.filter((r) => r.status === 200);
      t.is(ok.length, K);
      t.true(ok.every((r) => r.body.paid === true && r.body.payment.status === 'Settled'));
      const refused = results.filter((r) => r.status === 402);
      t.is(refused.length, N - K);
      t.true(refused.every((r) => r.body.code === 'BCK.ROUTER.0003'));
      // Both proxies paid (or refused) some of them: the cap held across processes.
      const rows = await grantRows(g.grantId);
      t.is(rows.length, K, 'refused calls leave no payment row');
      t.deepEqual(rows.map((r) => r.id).sort(), ok.map((r) => r.body.payment.paymentId as string).sort());
      t.true(rows.every((r) => r.apiKeyId === null && r.clientId === g.clientId && r.delegationId === g.delegationId));
      const charged = rows.reduce((acc, r) => acc + r.capChargedCents, 0n);
      const d = await delegationRow(s, g.delegationId);
      t.is(d.amountSpentCents, charged);
      t.is(d.amountSpentCents, BigInt(2 * K));
      const reserves = (await delegationTransactions(s, g.delegationId)).filter((x) => x.kind === 'reserve');
      t.is(reserves.length, K);
      t.is(m.chain.transfers.filter((x) => x.from === u.walletAddress).length, K);
      t.is(await ledgerBalance(s, u.walletAddress), FUNDS - BigInt(K) * (PRICE + 500n));
    });

    test(`${DUPES} parallel commerce calls with one requestId (and the user's key with it too): one payment per scope`, async (t) => {
      const s = stack();
      const u = await funded();
      const g = await deviceGrant(s, u);
      const keyDelegation = await createDelegation(u, 1000);
      const clients = await clientsOf(g);
      const keys = (await proxies()).map((p) => apiClient(`${p}/api/v1`, u.apiKey));
      const url = m.v2.url + m.v2.paidPath;
      const requestId = rid('dup');
      const [byGrant, byKey] = await Promise.all([
        Promise.all(
          Array.from({ length: DUPES }, (_, i) =>
            (clients[i % clients.length] as ApiClient).post(ROUTE, { requestId, url }),
          ),
        ),
        Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (keys[i % keys.length] as ApiClient).post('/router/route', { requestId, delegationId: keyDelegation, url }),
          ),
        ),
      ]);
      for (const [name, results] of [
        ['grant', byGrant],
        ['key', byKey],
      ] as const) {
        const ok = results.filter((r) => r.status === 200);
        t.is(ok.length, 1, `${name}: ${results.filter((r) => r.status !== 409).map((r) => r.text)}`);
        const paymentId = ok[0]?.body.payment.paymentId;
        t.true(
          results.every((r) => r.status === 200 || (r.status === 409 && r.body.paymentId === paymentId)),
          `${name}: every other one is 409 naming ${paymentId}`,
        );
      }
      const rows = (await paymentRows(s, u.userId)).filter((r) => r.requestId === requestId);
      t.deepEqual(rows.map((r) => r.requestScope).sort(), ['', g.grantId]);
      t.is((await delegationRow(s, g.delegationId)).amountSpentCents, 2n);
      t.is((await delegationRow(s, keyDelegation)).amountSpentCents, 2n);
    });

    /**
     * Runs a burst of the grant's paid calls from 6 workers over the proxies, ends the grant with `end` once the burst
     * pays, and checks that nothing of the grant was paid after `end` returned, that every call started after it was
     * refused, and that each worker was at last refused outright (401: no cache held the grant any more).
     */
    async function endMidBurst(
      t: ExecutionContext,
      u: Awaited<ReturnType<typeof funded>>,
      g: GrantToken,
      end: () => Promise<void>,
    ) {
      const s = stack();
      const clients = await clientsOf(g);
      const url = m.v2.url + m.v2.paidPath;
      const WORKERS = 6;
      let endedAt: number | undefined;
      let stop = false;
      const calls: { started: number; r: ApiResponse<any> }[] = [];
      const afterEnd = new Array<number>(WORKERS).fill(0);
      /** Whether each worker has met 401 yet: once the proxies' 1 s caches let go of the ended grant. */
      const unauthorized = new Array<boolean>(WORKERS).fill(false);
      const workers = Array.from({ length: WORKERS }, async (_, w) => {
        const api = clients[w % clients.length] as ApiClient;
        while (!stop) {
          const started = Date.now();
          const r = await api.post(ROUTE, { requestId: rid(`burst${w}`), url });
          calls.push({ started, r });
          if (endedAt !== undefined && started > endedAt) afterEnd[w] = (afterEnd[w] ?? 0) + 1;
          if (r.status === 401) unauthorized[w] = true;
        }
      });
      // End the grant once the burst is paying.
      t.true(await waitUntil(async () => (await grantRows(g.grantId)).length >= 5), 'the burst paid');
      await end();
      endedAt = Date.now();
      // Every worker makes three calls that start after the end returned and goes on until its token is refused
      // outright (401: the grant is no longer held by any cache); then the burst stops.
      t.true(
        await waitUntil(() => afterEnd.every((x) => x >= 3) && unauthorized.every(Boolean)),
        'calls were made after the end',
      );
      stop = true;
      await Promise.all(workers);
      const at = endedAt;

      const rows = await grantRows(g.grantId);
      t.deepEqual(
        rows.filter((r) => r.createdAt.getTime() > at).map((r) => `${r.id} ${r.createdAt.toISOString()}`),
        [],
        `no row created after the end returned (${new Date(at).toISOString()})`,
      );
      const isRefusal = (r: ApiResponse<any>) =>
        (r.status === 401 && r.body.code === 'BCK.AUTH.0001') ||
        (r.status === 402 && r.body.code === 'BCK.ROUTER.0003' && r.body.details === 'delegation is revoked');
      const late = calls.filter((c) => c.started > at);
      t.true(late.length >= 3 * WORKERS);
      t.deepEqual(
        late.filter((c) => !isRefusal(c.r)).map((c) => `${c.r.status} ${c.r.text}`),
        [],
        'every call started after the end is refused',
      );
      // Every answer of the burst is a payment or a refusal of the ended grant; the paid ones are its rows.
      t.deepEqual(
        calls.filter((c) => !(c.r.status === 200 && c.r.body.paid === true) && !isRefusal(c.r)).map((c) => c.r.text),
        [],
      );
      const paid = calls.filter((c) => c.r.status === 200);
      t.deepEqual(paid.map((c) => c.r.body.payment.paymentId as string).sort(), rows.map((r) => r.id).sort());
      const d = await delegationRow(s, g.delegationId);
      t.is(d.status, 'Revoked');
      t.is(
        d.amountSpentCents,
        rows.reduce((acc, r) => acc + r.capChargedCents, 0n),
      );
      t.is(m.chain.transfers.filter((x) => x.from === u.walletAddress).length, rows.length);
      t.log(
        `${calls.length} calls: ${paid.length} paid, ${calls.filter((c) => c.r.status === 402).length} x 402, ${calls.filter((c) => c.r.status === 401).length} x 401`,
      );
    }

    test('revocation mid-burst: no payment of the grant is created after the revoke returned; every call started after it is refused', async (t) => {
      const s = stack();
      const u = await funded();
      const g = await codeGrant(s, u, { spending_limit_cents: 100_000 });
      await endMidBurst(t, u, g, async () => {
        const rv = await fetch(`${s.proxyUrl}/oauth/bindings/${g.grantId}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${u.apiKey}` },
        });
        t.is(rv.status, 204);
      });
    });

    test("client disabled mid-burst: no payment of the client's grant is created after the disable returned; every call started after it is refused", async (t) => {
      const s = stack();
      const u = await funded();
      const g = await codeGrant(s, u, { spending_limit_cents: 100_000 });
      await endMidBurst(t, u, g, async () => {
        // What `npm run cli -- oauth-clients disable` runs, from this process (another one than the proxies').
        t.like(await disableClient(s.ctx, g.clientId), { disabled: true, grantsRevoked: 1 });
      });
      t.like(await s.ctx.db.em().findOneOrFail(OAuthGrant, { id: g.grantId }), {
        status: 'Revoked',
        revokedReason: 'client_disabled',
      });
    });
  },
  // Its ROUTER_MAX_CONCURRENT_PER_USER is PAID_ENV's 1000: the cap, not the per-user limit, decides the race.
  RACE_ENV,
  { serial: true },
);

test.serial(
  "ROUTER_MAX_CONCURRENT_PER_USER counts the user's calls through every grant and their API key together",
  async (t) => {
    const s = await startStack('sqlite', { ...PAID_ENV, ROUTER_MAX_CONCURRENT_PER_USER: '2' });
    try {
      const u = await s.user();
      const keyDelegation = await createDelegation(u, 1000);
      const a = await codeGrant(s, u);
      const b = await deviceGrant(s, u, {}, await connector(s));
      const other = await s.user();
      const og = await codeGrant(s, other);
      const held = (id: string) => slow.seen.filter((h) => h['x-test-id'] === id).length;
      const tag = rid('slot');
      const viaKey = (gate: boolean) =>
        u.api.call('POST', '/router/route', {
          requestId: rid('k'),
          delegationId: keyDelegation,
          url: `${slow.url}/x`,
          headers: gate ? { 'x-gate': '1', 'x-test-id': tag } : {},
        });
      const viaGrant = (g: GrantToken, gate: boolean) =>
        g.api.post(ROUTE, {
          requestId: rid('g'),
          url: `${slow.url}/x`,
          headers: gate ? { 'x-gate': '1', 'x-test-id': tag } : {},
        });

      // The user's two slots: one taken by their key, one by grant a; both calls wait at the merchant.
      const holding = [viaKey(true), viaGrant(a, true)];
      t.true(await waitUntil(() => held(tag) === 2), 'both calls reached the merchant');
      for (const [name, call] of [
        ['grant a', () => viaGrant(a, false)],
        ['grant b', () => viaGrant(b, false)],
        ['the API key', () => viaKey(false)],
      ] as const) {
        const r = await call();
        t.is(r.status, 429, `${name}: ${r.text}`);
        t.is(r.body.code, 'BCK.ROUTER.0007', name);
        t.true(r.body.retryable, name);
      }
      // Another user's grant has its own slots.
      const stranger = await viaGrant(og, false);
      t.is(stranger.status, 200, stranger.text);
      t.is(held(tag), 2, 'the refused calls never reached the merchant');
      openGates();
      const done = await Promise.all(holding);
      t.deepEqual(
        done.map((r) => [r.status, r.body.paid]),
        [
          [200, false],
          [200, false],
        ],
      );
      // The slots are free again, for every credential of the user.
      for (const r of await Promise.all([viaGrant(a, false), viaGrant(b, false)])) t.is(r.status, 200, r.text);
      t.is((await viaKey(false)).status, 200);
    } finally {
      await s.stop();
    }
  },
);
