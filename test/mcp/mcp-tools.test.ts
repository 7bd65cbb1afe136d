// The MCP tools through the official SDK client, each the HTTP route it names: call_service pays the official
// x402 v2, x402 v1 and mppx merchants from the grant's delegation (as POST /router/commerce/route does, with its
// refusal codes, idempotency per grant and requestId, and the grant's cap exact under 20 parallel calls, across two
// proxies on PostgreSQL); search_services reads the catalog without its upstreams; get_spending and list_payments
// read the grant's own delegation and payments. A refusal is an `isError` result with the route's BCK code.
import ava from 'ava';
import { RouterPayment } from '../../shared/db/entities/index.js';
import { addCatalogEntry } from '../../shared/catalog/entries.js';
import { forEachDb } from '../support/matrix.js';
import { type Connected, callTool, mcpClient, mcpGrant } from '../support/mcp.js';
import {
  type Merchants,
  RACE_ENV,
  type ScriptedMerchant,
  delegationRow,
  fundedUser,
  mppOnlyMerchant,
  startMerchants,
} from '../support/router-fixtures.js';
import { raceProxies } from '../support/stack.js';

const PRICE = 10_000n; // x402: fee 500 atomic, cap charge 2 cents; MPP: 1 cent, no fee
const FUNDS = 100_000_000n;
const PARALLEL = 20;
const K = 6;

let m: Merchants;
let mppOnly: ScriptedMerchant;
ava.before(async () => {
  m = await startMerchants(PRICE);
  mppOnly = await mppOnlyMerchant(m.mpp);
});
ava.after.always(async () => {
  await Promise.all([m?.close(), mppOnly?.close()]);
});

let seq = 0;
const rid = (p: string) => `${p}-${Date.now()}-${++seq}`;

forEachDb(
  ({ kind, stack, test }) => {
    const open: Connected[] = [];
    ava.afterEach.always(async () => {
      await Promise.all(open.splice(0).map((c) => c.close()));
    });
    const connect = async (url: string, token: string) => {
      const c = await mcpClient(url, token);
      open.push(c);
      // The client checks structuredContent against the output schemas it listed: list first, as hosts do.
      await c.client.listTools();
      return c;
    };
    const grantRows = (grantId: string) => stack().ctx.db.em().fork().find(RouterPayment, { grantId });

    test('call_service pays x402 v2, x402 v1 and mppx merchants and relays their answers; get_spending and list_payments follow', async (t) => {
      const s = stack();
      const u = await fundedUser(s, m.chain, FUNDS);
      const g = await mcpGrant(s, u, { spending_limit_cents: 100 });
      const c = await connect(s.proxyUrl, g.token);
      const merchants = [
        ['x402 v2', m.v2.url + m.v2.paidPath, 'x402', '2'],
        ['x402 v1', m.v1.url + m.v1.paidPath, 'x402', '2'],
        ['mppx', m.mpp.url + m.mpp.paidPath, 'x402', '2'],
        ['mppx, MPP only', mppOnly.url + m.mpp.paidPath, 'mpp', '1'],
      ] as const;
      const paid: string[] = [];
      for (const [name, url, protocol, cents] of merchants) {
        const r = await callTool(c, 'call_service', { url });
        t.false(r.isError, `${name}: ${r.text}`);
        t.is(r.structured.status, 200, name);
        t.is(r.structured.paid, true, name);
        t.truthy(r.structured.body, name);
        const payment = r.structured.payment as { paymentId: string; status: string; fee: { capChargedCents: string } };
        t.is(payment.status, 'Settled', name);
        t.is(payment.fee.capChargedCents, cents, name);
        t.deepEqual(JSON.parse(r.text), r.structured, `${name}: the text is the same JSON`);
        const row = await s.ctx.db.em().fork().findOneOrFail(RouterPayment, { id: payment.paymentId });
        t.is(row.protocol, protocol, name);
        t.is(row.grantId, g.grantId);
        t.is(row.delegationId, g.delegationId);
        t.is(row.apiKeyId, null);
        paid.push(payment.paymentId);
      }
      const spending = await callTool(c, 'get_spending');
      t.false(spending.isError, spending.text);
      t.deepEqual(spending.structured, {
        consentType: 'commerce',
        currency: 'usd',
        capCents: '100',
        spentCents: '7',
        remainingCents: '93',
        expiresAt: (await delegationRow(s, g.delegationId)).expiresAt.toISOString(),
      });

      // Paged with the cursor it hands out, newest first, every payment once.
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 5; i++) {
        const page = await callTool(c, 'list_payments', { limit: 3, ...(cursor === undefined ? {} : { cursor }) });
        t.false(page.isError, page.text);
        seen.push(...(page.structured.payments as { paymentId: string }[]).map((p) => p.paymentId));
        cursor = page.structured.nextCursor as string | undefined;
        if (cursor === undefined) break;
      }
      t.deepEqual(seen, [...paid].reverse());
      const forged = await callTool(c, 'list_payments', { cursor: 'bm90IGEgY3Vyc29y' });
      t.true(forged.isError);
      t.is(forged.structured.code, 'BCK.ROUTER.0001');
    });

    test('search_services finds catalog services by slug, name or description, never showing an upstream; call_service calls one by slug', async (t) => {
      const s = stack();
      const slug = `weather-${++seq}`;
      await addCatalogEntry(s.ctx, slug, {
        url: m.v2.url,
        name: 'Rain gauge',
        description: 'Precipitation by city',
        category: 'weather',
        protocol: 'x402',
        priceHint: '0.01 USDC',
      });
      const u = await fundedUser(s, m.chain, FUNDS);
      const g = await mcpGrant(s, u, { spending_limit_cents: 10 });
      const c = await connect(s.proxyUrl, g.token);
      for (const query of [slug, 'rain GAUGE', 'precipitation']) {
        const r = await callTool(c, 'search_services', { query });
        t.false(r.isError, r.text);
        t.deepEqual(r.structured, {
          services: [
            {
              slug,
              name: 'Rain gauge',
              description: 'Precipitation by city',
              protocol: 'x402',
              priceHint: '0.01 USDC',
            },
          ],
        });
        t.false(r.text.includes(m.v2.url), 'the upstream is never shown');
      }
      const limited = await callTool(c, 'search_services', { limit: 1 });
      t.true((limited.structured.services as unknown[]).length <= 1);
      const r = await callTool(c, 'call_service', { slug, path: m.v2.paidPath.slice(1) });
      t.false(r.isError, r.text);
      t.is(r.structured.paid, true);
      const [row] = await grantRows(g.grantId);
      t.is(row?.resourceUrl, `slug:${slug}${m.v2.paidPath}`);
    });

    test('refusals are isError results with the route codes, and pay nothing: bad arguments, a duplicate requestId, a spent cap', async (t) => {
      const s = stack();
      const u = await fundedUser(s, m.chain, FUNDS);
      const g = await mcpGrant(s, u, { spending_limit_cents: 2 });
      const c = await connect(s.proxyUrl, g.token);
      const url = m.v2.url + m.v2.paidPath;
      for (const [why, args] of [
        ['both url and slug', { url, slug: 'x' }],
        ['neither', {}],
        ['a delegationId', { url, delegationId: g.delegationId }],
        ['an unsafe path', { slug: 'x', path: '../admin' }],
        ['a method outside the list', { url, method: 'TRACE' }],
      ] as const) {
        const r = await callTool(c, 'call_service', args);
        t.true(r.isError, why);
        t.is(r.structured.code, 'BCK.ROUTER.0001', why);
        t.is(typeof r.structured.message, 'string', why);
        t.regex(String(r.structured.details), /^arguments\.|body\./, why);
      }
      t.deepEqual(await grantRows(g.grantId), [], 'nothing paid');

      const requestId = rid('dup');
      const first = await callTool(c, 'call_service', { url, requestId });
      t.false(first.isError, first.text);
      const paymentId = (first.structured.payment as { paymentId: string }).paymentId;
      const dup = await callTool(c, 'call_service', { url, requestId });
      t.true(dup.isError);
      t.is(dup.structured.code, 'BCK.ROUTER.0002');
      t.is(dup.structured.paymentId, paymentId);

      // The cap (2 cents) is spent by the first call.
      const over = await callTool(c, 'call_service', { url });
      t.true(over.isError);
      t.is(over.structured.code, 'BCK.ROUTER.0003');
      t.is((await grantRows(g.grantId)).length, 1);
      const spending = await callTool(c, 'get_spending');
      t.is(spending.structured.remainingCents, '0');
    });

    test(`cap exact: ${PARALLEL} parallel call_service calls against a cap that fits ${K}: ${K} paid, the rest BCK.ROUTER.0003`, async (t) => {
      const s = stack();
      const u = await fundedUser(s, m.chain, FUNDS);
      const g = await mcpGrant(s, u, { spending_limit_cents: 2 * K });
      const proxies = await raceProxies(s);
      t.is(proxies.length, kind === 'postgresql' ? 2 : 1);
      const clients = await Promise.all(proxies.map((p) => connect(p, g.token)));
      const url = m.v2.url + m.v2.paidPath;
      const results = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          callTool(clients[i % clients.length] as Connected, 'call_service', { url }),
        ),
      );
      const ok = results.filter((r) => !r.isError);
      const refused = results.filter((r) => r.isError);
      t.is(ok.length, K);
      t.true(ok.every((r) => r.structured.paid === true));
      t.deepEqual(
        refused.map((r) => r.structured.code),
        Array(PARALLEL - K).fill('BCK.ROUTER.0003'),
      );
      const rows = await grantRows(g.grantId);
      t.is(rows.length, K);
      const charged = rows.reduce((sum, r) => sum + r.capChargedCents, 0n);
      const d = await delegationRow(s, g.delegationId);
      t.is(d.amountSpentCents, charged);
      t.is(d.amountSpentCents, BigInt(2 * K));
    });
  },
  RACE_ENV,
  { serial: true },
);
