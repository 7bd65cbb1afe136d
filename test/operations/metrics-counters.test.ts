// What the metrics count, read back through GET /metrics and a strict parser of the exposition text: router
// payments by protocol, outcome and refusal code, the money they moved per asset (exact atomic units), signing,
// outbound calls, database transactions, caches and HTTP requests; the OAuth token endpoint; and that no caller
// can mint label values (ids and unknown paths fall into route templates or `unmatched`).
import { randomBytes, randomUUID } from 'node:crypto';
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import { declaredRoutes } from '../support/declared-routes.js';
import { forEachDb } from '../support/matrix.js';
import { codeForm, connector, pkce, approve, authorizeBody, postForm, refreshForm } from '../support/oauth.js';
import { type Exposition, parseExposition, samplesOf, sampleValue } from '../support/prometheus.js';
import {
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  createDelegation,
  fund,
  mppOnlyMerchant,
  startMerchants,
} from '../support/router-fixtures.js';
import test from 'ava';

const TOKEN = `scrape-${randomBytes(16).toString('hex')}`;
const PRICE = 10_000n; // fee 500 atomic at the default 500 bps

let m: Merchants;
let mppOnly: ScriptedMerchant;
test.before(async () => {
  m = await startMerchants(PRICE);
  mppOnly = await mppOnlyMerchant(m.mpp);
});
test.after.always(async () => {
  await Promise.all([m?.close(), mppOnly?.close()]);
});

async function scrape(base: string): Promise<Exposition> {
  const r = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`/metrics: ${r.status} ${text}`);
  return parseExposition(text);
}

let n = 0;
const rid = () => `metrics-${Date.now()}-${++n}`;

/** The label sets of the HTTP request counter, as `method route status`, without the scrapes' own. */
const httpSeries = (e: Exposition): Set<string> =>
  new Set(
    samplesOf(e, 'payroute_http_requests_total')
      .filter((s) => s.labels.route !== '/metrics')
      .map((s) => `${s.labels.method} ${s.labels.route} ${s.labels.status}`),
  );

forEachDb(
  ({ kind, stack, test }) => {
    test('paid calls of each protocol and refusals: counted exactly, with the amounts and fees per asset', async (t) => {
      // A proxy of this test's own: every count below is of these calls only.
      const proxy = await stack().spawn('proxy');
      try {
        const base = `${proxy.url}/api/v1`;
        const u = await stack().user();
        await fund(stack(), m.chain, u, 100_000_000n);
        const delegationId = await createDelegation(u, 1000);
        const post = async (who: { apiKey: string }, path: string, body: Record<string, unknown>) => {
          const r = await fetch(`${base}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${who.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          return {
            status: r.status,
            body: (await r.json()) as Record<string, unknown> & { payment?: { status: string } },
          };
        };
        const route = (who: { apiKey: string }, delegation: string, url: string) =>
          post(who, '/router/route', { requestId: rid(), delegationId: delegation, url });

        // Mode B: x402 v2, x402 v1, MPP (each settled by the merchant's receipt).
        for (const url of [m.v2.url + m.v2.paidPath, m.v1.url + m.v1.paidPath, mppOnly.url + m.mpp.paidPath]) {
          const r = await route(u, delegationId, url);
          t.is(r.status, 200, JSON.stringify(r.body));
          t.is(r.body.payment?.status, 'Settled');
        }
        // Mode A: a credential for the v2 offer, its fee leg settled with it (a requestId is given).
        const offer = decodePaymentRequiredV2(
          (await fetch(m.v2.url + m.v2.paidPath)).headers.get('payment-required') ?? '',
        );
        if (offer.type !== 'decoded') throw new Error(offer.reason);
        const minted = await post(u, '/router/payments', {
          protocol: 'x402',
          requestId: rid(),
          delegationId,
          target: { accepts: offer.value.accepts },
        });
        t.is(minted.status, 200, JSON.stringify(minted.body));
        t.is(minted.body.status, 'Issued');
        // A cap of 3 cents: the first call (2 cents) is paid, the second refused when its charge is taken (after
        // choosing and signing: the signature is dropped).
        const capped = await stack().user();
        await fund(stack(), m.chain, capped, 100_000_000n);
        const small = await createDelegation(capped, 3);
        t.is((await route(capped, small, m.v2.url + m.v2.paidPath)).status, 200);
        const overCap = await route(capped, small, m.v2.url + m.v2.paidPath);
        t.is(overCap.status, 402);
        t.is(overCap.body.code, 'BCK.ROUTER.0003');
        // An unknown delegation: refused before anything is chosen.
        const unknown = await route(u, randomUUID(), m.v2.url + m.v2.paidPath);
        t.is(unknown.status, 402);
        t.is(unknown.body.code, 'BCK.ROUTER.0003');

        const e = await scrape(proxy.url);
        const payments = (protocol: string, outcome: string, code = 'none') =>
          sampleValue(e, 'payroute_router_payments_total', { protocol, outcome, code });
        t.is(payments('x402_v2', 'settled'), 2);
        t.is(payments('x402_v1', 'settled'), 1);
        t.is(payments('mpp', 'settled'), 1);
        t.is(payments('x402_v2', 'issued'), 1);
        t.is(payments('x402_v2', 'refused', 'BCK.ROUTER.0003'), 1);
        t.is(payments('none', 'refused', 'BCK.ROUTER.0003'), 1);
        t.is(
          samplesOf(e, 'payroute_router_payments_total').reduce((sum, s) => sum + s.value, 0),
          7,
          'nothing else was counted',
        );
        // Five merchant legs of 10,000 atomic USDC; fee legs of 500 on each x402 payment but the refused one.
        t.is(sampleValue(e, 'payroute_router_paid_atomic_total', { asset: 'USDC' }), 5 * Number(PRICE));
        t.is(sampleValue(e, 'payroute_router_fees_atomic_total', { asset: 'USDC' }), 4 * 500);
        t.is(samplesOf(e, 'payroute_router_paid_atomic_total').length, 1, 'one asset paid');
        t.is(e.types.get('payroute_router_paid_atomic_total'), 'counter');

        // Six signatures: five payments and the one dropped at the cap; none waiting now.
        t.is(sampleValue(e, 'payroute_signing_duration_seconds_count', {}), 6);
        t.is(sampleValue(e, 'payroute_signing_queue_depth', {}), 0);
        // Each mode B call probes its merchant (402: 4xx); each paid one calls it again (2xx).
        t.is(sampleValue(e, 'payroute_upstream_response_seconds_count', { status_class: '4xx' }), 6);
        t.is(sampleValue(e, 'payroute_upstream_response_seconds_count', { status_class: '2xx' }), 4);
        // Two transactions per paid mode B call (issuance, outcome), one for mode A, one rolled back at the cap.
        t.is(sampleValue(e, 'payroute_db_transaction_duration_seconds_count', { dialect: kind, outcome: 'commit' }), 9);
        t.is(
          sampleValue(e, 'payroute_db_transaction_duration_seconds_count', { dialect: kind, outcome: 'rollback' }),
          1,
        );
        // SQLite: every one of them ran in a group commit; PostgreSQL has none.
        t.is(sampleValue(e, 'payroute_db_group_commit_size_sum', {}), kind === 'sqlite' ? 10 : 0);
        // One API key lookup per router request (a hit or a miss depending on the 1 s cache).
        const keyLookups = samplesOf(e, 'payroute_cache_lookups_total', { cache: 'api_key' });
        t.is(
          keyLookups.reduce((sum, s) => sum + s.value, 0),
          7,
        );
        // HTTP, by route template.
        const http = (method: string, route: string, status: string) =>
          sampleValue(e, 'payroute_http_requests_total', { method, route, status });
        t.is(http('POST', '/api/v1/router/route', '200'), 4);
        t.is(http('POST', '/api/v1/router/route', '402'), 2);
        t.is(http('POST', '/api/v1/router/payments', '200'), 1);
        t.is(
          sampleValue(e, 'payroute_http_request_duration_seconds_count', {
            method: 'POST',
            route: '/api/v1/router/route',
            status: '200',
          }),
          4,
        );
      } finally {
        await proxy.stop();
      }
    });

    test('label values stay bounded: unknown paths and ids fall into route templates or unmatched', async (t) => {
      const proxy = await stack().spawn('proxy');
      try {
        const u = await stack().user();
        const templates = new Set([
          ...(await declaredRoutes(stack().ctx)).map((r) => r.path),
          'unmatched',
          'forwarded',
          '/metrics',
        ]);
        const adminBefore = httpSeries(await scrape(stack().adminUrl));
        const proxyBefore = httpSeries(await scrape(proxy.url));
        const marker = randomBytes(6).toString('hex');
        const auth = { authorization: `Bearer ${u.apiKey}` };
        const calls: Promise<number>[] = [];
        for (let i = 0; i < 50; i++) {
          const id = `${marker}${i}`;
          const send = (path: string, init: RequestInit = {}) =>
            fetch(`${proxy.url}${path}`, init).then(async (r) => {
              await r.arrayBuffer();
              return r.status;
            });
          // The proxy's own paths: one no route takes, one route with a path parameter.
          calls.push(send(`/api/v1/router/${id}`, { headers: auth }));
          calls.push(
            send(`/api/v1/router/payments/${randomUUID()}/settled`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ txHash: `0x${'ab'.repeat(32)}` }),
            }),
          );
          // Forwarded to the admin process: an unknown path, and an agent id no agent has.
          calls.push(send(`/${id}?q=${id}`));
          calls.push(
            send(`/api/v1/protocol/agents/did:payroute:sandbox:${randomBytes(16).toString('hex')}`, { headers: auth }),
          );
        }
        t.deepEqual([...new Set(await Promise.all(calls))], [404]);

        const adminAfter = await scrape(stack().adminUrl);
        const proxyAfter = await scrape(proxy.url);
        const added = (after: Set<string>, before: Set<string>) => [...after].filter((s) => !before.has(s)).sort();
        t.deepEqual(
          added(httpSeries(proxyAfter), proxyBefore),
          ['GET forwarded 404', 'GET unmatched 404', 'POST /api/v1/router/payments/:id/settled 404'].filter(
            (s) => !proxyBefore.has(s),
          ),
        );
        t.deepEqual(
          added(httpSeries(adminAfter), adminBefore),
          ['GET /api/v1/protocol/agents/:agentId 404', 'GET unmatched 404'].filter((s) => !adminBefore.has(s)),
        );
        for (const e of [adminAfter, proxyAfter]) {
          for (const s of e.samples) {
            for (const v of Object.values(s.labels)) t.false(v.includes(marker), `${s.name} ${v}`);
            if (s.labels.route !== undefined) t.true(templates.has(s.labels.route), s.labels.route);
          }
        }
      } finally {
        await proxy.stop();
      }
    });

    test('OAuth tokens: issued by grant type, refused by error; an unknown grant_type is no label of its own', async (t) => {
      const before = await scrape(stack().adminUrl);
      const u = await stack().user();
      const c = await connector(stack());
      const p = await pkce();
      const approved = await approve(stack(), u.apiKey, authorizeBody(c, p));
      t.is(approved.status, 201);
      const form = codeForm(c, String(approved.body.code), p.verifier);
      const issued = await postForm(stack(), '/oauth/token', form);
      t.is(issued.status, 200);
      t.is((await postForm(stack(), '/oauth/token', refreshForm(c, String(issued.body.refresh_token)))).status, 200);
      // A code is single-use (RFC 6749 §4.1.2: its replay also revokes the grant, so it comes last).
      t.is((await postForm(stack(), '/oauth/token', form)).body.error, 'invalid_grant');
      const password = await postForm(stack(), '/oauth/token', { grant_type: `password-${randomUUID()}` });
      t.is(password.body.error, 'unsupported_grant_type');

      const after = await scrape(stack().adminUrl);
      const delta = (name: string, labels: Record<string, string>) =>
        sampleValue(after, name, labels) - sampleValue(before, name, labels);
      t.is(delta('payroute_oauth_tokens_issued_total', { grant_type: 'authorization_code' }), 1);
      t.is(delta('payroute_oauth_tokens_issued_total', { grant_type: 'refresh_token' }), 1);
      t.is(
        delta('payroute_oauth_token_refusals_total', { grant_type: 'authorization_code', error: 'invalid_grant' }),
        1,
      );
      t.is(delta('payroute_oauth_token_refusals_total', { grant_type: 'other', error: 'unsupported_grant_type' }), 1);
      t.deepEqual(
        [...new Set(samplesOf(after, 'payroute_oauth_token_refusals_total').map((s) => s.labels.grant_type))].filter(
          (g) => !['authorization_code', 'refresh_token', 'device_code', 'other'].includes(g ?? ''),
        ),
        [],
      );
    });
  },
  { ...PAID_ENV, METRICS_TOKEN: TOKEN },
  // Serial: the bounded-labels test compares the admin process's series before and after its own requests.
  { serial: true },
);
