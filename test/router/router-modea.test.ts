// Mode A end to end: POST /api/v1/router/payments mints a credential for requirements the caller
// fetched itself; the test attaches it to its own request and the official merchant library answers 200. Then
// the settled record, the ledger listing (json, csv, filters) and the summary.
import { getAddress } from 'viem';
import { RouterPayment, TokenLedger } from '../../shared/db/entities/index.js';
import { createWalletKeyCache } from '../../shared/router/wallet-keys.js';
import { MERCHANT_MPP, MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { forEachDb } from '../support/matrix.js';
import { merchantsOfFile } from '../support/file-merchants.js';
import {
  FEE_RECIPIENT,
  PAID_ENV,
  type User,
  createDelegation,
  delegationRow,
  fund,
  ledgerBalance,
  paymentRow,
  v2Target,
  payingUser,
} from '../support/router-fixtures.js';

const PRICE = 10_000n;
const m = merchantsOfFile(PRICE);

let n = 0;
const rid = () => `mint-${Date.now()}-${++n}`;
const hash = (c: string) => `0x${c.repeat(64)}`;

async function v1Target(): Promise<Record<string, unknown>> {
  const r = await fetch(m.v1.url + m.v1.paidPath);
  const body = (await r.json()) as { accepts: unknown[] };
  return { x402Version: 1, accepts: body.accepts };
}

async function mppTarget(): Promise<Record<string, unknown>> {
  const r = await fetch(m.mpp.url + m.mpp.paidPath);
  return { challenge: r.headers.get('www-authenticate') ?? '' };
}

forEachDb(({ stack, test }) => {
  const paidUser = (limitCents = 1000) => payingUser(stack(), m.chain, 100_000_000n, limitCents);

  async function mint(u: User, body: Record<string, unknown>) {
    return u.api.post('/router/payments', body);
  }

  const cases = [
    {
      name: 'x402 v2',
      protocol: 'x402',
      target: () => v2Target(m.v2),
      header: 'PAYMENT-SIGNATURE',
      url: () => m.v2.url + m.v2.paidPath,
      recipient: MERCHANT_V2,
      version: 2,
    },
    {
      name: 'x402 v1',
      protocol: 'x402',
      target: v1Target,
      header: 'X-PAYMENT',
      url: () => m.v1.url + m.v1.paidPath,
      recipient: undefined,
      version: 1,
    },
    {
      name: 'mpp',
      protocol: 'mpp',
      target: mppTarget,
      header: 'Authorization',
      url: () => m.mpp.url + m.mpp.paidPath,
      recipient: MERCHANT_MPP,
      version: undefined,
    },
  ] as const;

  for (const c of cases) {
    test(`${c.name}: Issued credential, the merchant library accepts it`, async (t) => {
      const { u, delegationId } = await paidUser();
      const requestId = rid();
      const r = await mint(u, {
        delegationId,
        protocol: c.protocol,
        target: await c.target(),
        resourceUrl: c.url(),
        requestId,
      });
      t.is(r.status, 200, r.text);
      t.is(r.body.status, 'Issued');
      t.is(r.body.protocol, c.protocol);
      t.deepEqual(Object.keys(r.body.credential).sort(), ['name', 'transport', 'value']);
      t.is(r.body.credential.transport, 'header');
      t.is(r.body.credential.name, c.header);
      t.is(r.body.requestId, requestId);
      t.is(r.body.delegationId, delegationId);
      t.is(r.body.x402Version, c.version);
      if (c.recipient !== undefined) t.is(r.body.settlement.recipient, getAddress(c.recipient));
      // Fee only on x402 (with a requestId); MPP pays the merchant leg only.
      if (c.protocol === 'x402')
        t.deepEqual(r.body.fee, {
          bps: 500,
          amount: '500',
          cents: '1',
          capChargedCents: '2',
          capChargedMicros: '10500',
        });
      else
        t.deepEqual(r.body.fee, { bps: 0, amount: '0', cents: '0', capChargedCents: '1', capChargedMicros: '10000' });
      const spent = c.protocol === 'x402' ? 2n : 1n;
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, spent);
      t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n - PRICE - (c.protocol === 'x402' ? 500n : 0n));

      const paid = await fetch(c.url(), { headers: { [r.body.credential.name]: r.body.credential.value } });
      t.is(paid.status, 200, await paid.clone().text());
      t.deepEqual(await paid.json(), { answer: 42 });
      t.is(m.chain.transfers.filter((x) => x.from === u.walletAddress).length, 1);

      // Duplicate requestId: 409, no second credential.
      const dup = await mint(u, { delegationId, protocol: c.protocol, target: await c.target(), requestId });
      t.is(dup.status, 409);
      t.is(dup.body.code, 'BCK.ROUTER.0002');
      t.is(dup.body.paymentId, r.body.paymentId);
      t.is(dup.body.credential, undefined);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, spent);
    });
  }

  test('x402 without requestId: no fee collected', async (t) => {
    const { u, delegationId } = await paidUser();
    const feeRows = async (id: string) => stack().ctx.db.em().count(TokenLedger, { reference: id, kind: 'router_fee' });
    const r = await mint(u, { delegationId, protocol: 'x402', target: await v2Target(m.v2) });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body.fee, { bps: 0, amount: '0', cents: '0', capChargedCents: '1', capChargedMicros: '10000' });
    t.is(r.body.requestId, null);
    t.is(await feeRows(r.body.paymentId), 0);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n);
    const withId = await mint(u, { delegationId, protocol: 'x402', target: await v2Target(m.v2), requestId: rid() });
    t.is(withId.body.fee.amount, '500');
    t.is(await feeRows(withId.body.paymentId), 2);
    t.is((await paymentRow(stack(), withId.body.paymentId))?.feeRecipient, FEE_RECIPIENT);
    // Two credentials without requestId are two payments.
    const again = await mint(u, { delegationId, protocol: 'x402', target: await v2Target(m.v2) });
    t.is(again.status, 200);
    t.not(again.body.paymentId, r.body.paymentId);
  });

  test('mode A refusals: protocol/target mismatch, cap, unknown delegation', async (t) => {
    const { u, delegationId } = await paidUser(1);
    const mismatch = await mint(u, { delegationId, protocol: 'mpp', target: await v2Target(m.v2) });
    t.is(mismatch.status, 400);
    t.is(mismatch.body.code, 'BCK.ROUTER.0001');
    const cap = await mint(u, { delegationId, protocol: 'x402', target: await v2Target(m.v2), requestId: rid() });
    t.is(cap.status, 402);
    t.is(cap.body.code, 'BCK.ROUTER.0003');
    const other = await stack().user();
    const foreign = await mint(other, { delegationId, protocol: 'x402', target: await v2Target(m.v2) });
    t.is(foreign.status, 402);
    t.is(foreign.body.code, 'BCK.ROUTER.0003');
  });

  test("mode A: options in the other x402 version's fields than the target declares -> 400, nothing signed or charged", async (t) => {
    const { u, delegationId } = await paidUser();
    const v1 = (await v1Target()) as { accepts: unknown[] };
    const v2 = (await v2Target(m.v2)) as { accepts: unknown[] };
    // An x402@1 merchant's options sent without x402Version (2 by default), and v2 options declared as version 1.
    for (const target of [
      { accepts: v1.accepts },
      { x402Version: 2, accepts: v1.accepts },
      { x402Version: 1, accepts: v2.accepts },
    ]) {
      const r = await mint(u, { delegationId, protocol: 'x402', target, requestId: rid() });
      t.is(r.status, 400, r.text);
      t.is(r.body.code, 'BCK.ROUTER.0001');
      t.regex(r.body.details, /names its network/);
    }
    t.is(await stack().ctx.db.em().count(RouterPayment, { userId: u.userId }), 0);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
  });

  test('the same MPP challenge minted twice: 409 BCK.ROUTER.0013 naming the first payment; cap and ledger charged once', async (t) => {
    const { u, delegationId } = await paidUser();
    const target = await mppTarget();
    const first = await mint(u, { delegationId, protocol: 'mpp', target, requestId: rid() });
    t.is(first.status, 200, first.text);
    const balance = await ledgerBalance(stack(), u.walletAddress);
    const spent = (await delegationRow(stack(), delegationId)).amountSpentCents;
    // A retry under a new requestId, or with none: the challenge fixes the nonce, so only one credential can pay.
    for (const body of [
      { delegationId, protocol: 'mpp', target, requestId: rid() },
      { delegationId, protocol: 'mpp', target },
    ]) {
      const again = await mint(u, body);
      t.is(again.status, 409, again.text);
      t.is(again.body.code, 'BCK.ROUTER.0013');
      t.is(again.body.paymentId, first.body.paymentId);
    }
    t.is(await ledgerBalance(stack(), u.walletAddress), balance, 'no second debit');
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, spent, 'no second cap charge');
    t.is(await stack().ctx.db.em().count(RouterPayment, { userId: u.userId }), 1);
  });

  test('decrypted wallet keys leave the cache when their TTL ends', async (t) => {
    const u = await stack().user();
    const cache = createWalletKeyCache(stack().ctx, { ttlMs: 50 });
    t.regex(await cache.get(u.userId), /^0x[0-9a-f]{64}$/);
    t.is(cache.size(), 1);
    await new Promise((r) => setTimeout(r, 200));
    t.is(cache.size(), 0, 'gone without being looked up again');
  });

  test('settled: 200, same hash no-op, another hash 409 0005, another user 404 0004', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await mint(u, { delegationId, protocol: 'x402', target: await v2Target(m.v2), requestId: rid() });
    const id = r.body.paymentId as string;
    const s1 = await u.api.post(`/router/payments/${id}/settled`, { txHash: hash('a') });
    t.is(s1.status, 200, s1.text);
    t.is(s1.body.status, 'Settled');
    t.is(s1.body.txHash, hash('a'));
    t.is(s1.body.credential, undefined);
    const s2 = await u.api.post(`/router/payments/${id}/settled`, { txHash: hash('a') });
    t.is(s2.status, 200);
    t.is(s2.body.txHash, hash('a'));
    const s3 = await u.api.post(`/router/payments/${id}/settled`, { txHash: hash('b') });
    t.is(s3.status, 409);
    t.is(s3.body.code, 'BCK.ROUTER.0005');
    const other = await stack().user();
    const s4 = await other.api.post(`/router/payments/${id}/settled`, { txHash: hash('a') });
    t.is(s4.status, 404);
    t.is(s4.body.code, 'BCK.ROUTER.0004');
    const s5 = await u.api.post('/router/payments/00000000-0000-4000-8000-000000000000/settled', { txHash: hash('a') });
    t.is(s5.status, 404);
    const bad = await u.api.post(`/router/payments/${id}/settled`, { txHash: 'nope' });
    t.is(bad.status, 400);
    t.is((await paymentRow(stack(), id))?.txHash, hash('a'));
  });

  test('ledger: newest first, delegationId/from/to filters, csv; summary by day/week/month', async (t) => {
    const u = await stack().user();
    await fund(stack(), m.chain, u, 100_000_000n);
    const d1 = await createDelegation(u, 1000);
    const d2 = await createDelegation(u, 1000);
    const ids: string[] = [];
    for (const d of [d1, d2, d1]) {
      const r = await mint(u, { delegationId: d, protocol: 'x402', target: await v2Target(m.v2), requestId: rid() });
      t.is(r.status, 200);
      ids.push(r.body.paymentId);
      await new Promise((res) => setTimeout(res, 15));
    }
    const all = await u.api.get('/router/payments');
    t.is(all.status, 200);
    t.is(all.body.total, 3);
    t.deepEqual(
      all.body.payments.map((p: { paymentId: string }) => p.paymentId),
      [...ids].reverse(),
    );
    t.is(all.body.payments[0].credential, undefined);
    t.false(all.text.includes('"value"'));
    const byD = await u.api.get(`/router/payments?delegationId=${d1}`);
    t.deepEqual(
      byD.body.payments.map((p: { paymentId: string }) => p.paymentId),
      [ids[2], ids[0]],
    );
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const past = new Date(Date.now() - 3_600_000).toISOString();
    t.is((await u.api.get(`/router/payments?from=${encodeURIComponent(future)}`)).body.total, 0);
    t.is((await u.api.get(`/router/payments?to=${encodeURIComponent(past)}`)).body.total, 0);
    t.is(
      (await u.api.get(`/router/payments?from=${encodeURIComponent(past)}&to=${encodeURIComponent(future)}`)).body
        .total,
      3,
    );
    t.is((await u.api.get('/router/payments?from=yesterday')).status, 400);
    // `total` counts every match; `limit` bounds the rows returned.
    const one = await u.api.get('/router/payments?limit=1');
    t.is(one.body.total, 3);
    t.deepEqual(
      one.body.payments.map((p: { paymentId: string }) => p.paymentId),
      [ids[2]],
    );
    // Refused as 400 on both databases: reversed bounds, years PostgreSQL cannot store, a limit that is not decimal.
    for (const query of [
      `from=${encodeURIComponent(future)}&to=${encodeURIComponent(past)}`,
      'from=0000-01-01',
      `to=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`,
      'limit=0x10',
      'limit=1e3',
      'limit=0',
    ]) {
      for (const path of ['/router/payments', '/router/payments/summary']) {
        if (path.endsWith('summary') && query.startsWith('limit')) continue;
        const r = await u.api.get(`${path}?${query}`);
        t.is(r.status, 400, `${path}?${query}: ${r.text}`);
        t.is(r.body.code, 'BCK.ROUTER.0001', query);
      }
    }
    // Another user sees none of them.
    t.is((await (await stack().user()).api.get('/router/payments')).body.total, 0);

    const csv = await u.api.get('/router/payments?format=csv');
    t.is(csv.status, 200);
    t.regex(csv.headers.get('content-type') ?? '', /text\/csv/);
    t.is(csv.headers.get('content-disposition'), 'attachment; filename="router-payments.csv"');
    const lines = csv.text.trim().split('\r\n');
    t.is(lines.length, 4);
    t.true(lines[0]?.startsWith('paymentId,'));
    t.true(lines[1]?.startsWith(ids[2] ?? '-'));

    const today = new Date().toISOString().slice(0, 10);
    for (const g of ['day', 'week', 'month']) {
      const s = await u.api.get(`/router/payments/summary?granularity=${g}`);
      t.is(s.status, 200, s.text);
      t.deepEqual(Object.keys(s.body).sort(), ['series', 'total']);
      t.is(s.body.total, 3);
      t.is(s.body.series.length, 1);
      t.is(s.body.series[0].value, 3);
      t.regex(s.body.series[0].date, /^\d{4}-\d{2}-\d{2}$/);
      if (g === 'day') t.is(s.body.series[0].date, today);
      if (g === 'month') t.is(s.body.series[0].date, `${today.slice(0, 8)}01`);
    }
    t.is((await u.api.get('/router/payments/summary?granularity=year')).status, 400);
    const windowed = await u.api.get(
      `/router/payments/summary?from=${encodeURIComponent(past)}&to=${encodeURIComponent(future)}`,
    );
    t.deepEqual(windowed.body, { total: 3, series: [{ date: today, value: 3 }] });
    t.deepEqual((await u.api.get(`/router/payments/summary?from=${encodeURIComponent(future)}`)).body, {
      total: 0,
      series: [],
    });

    // The summary takes the listing's delegationId filter (a bad one is a 400, not the whole account).
    t.deepEqual((await u.api.get(`/router/payments/summary?delegationId=${d2}`)).body, {
      total: 1,
      series: [{ date: today, value: 1 }],
    });
    t.is((await u.api.get('/router/payments/summary?delegationId=nope')).status, 400);
    // A date-only `to` names its whole UTC day: from=D&to=D is day D, on the listing and the summary.
    t.is((await u.api.get(`/router/payments?from=${today}&to=${today}`)).body.total, 3);
    t.deepEqual((await u.api.get(`/router/payments/summary?from=${today}&to=${today}`)).body, {
      total: 3,
      series: [{ date: today, value: 3 }],
    });
    t.is((await u.api.get(`/router/payments?to=${today}`)).body.total, 3);
    // Pages: `page` (1-based) of `limit` rows; `offset` (the contract's results per page) is the same knob.
    const pages = await Promise.all([1, 2, 3, 4].map((p) => u.api.get(`/router/payments?limit=1&page=${p}`)));
    t.deepEqual(
      pages.map((p) => p.body.payments.map((x: { paymentId: string }) => x.paymentId)),
      [[ids[2]], [ids[1]], [ids[0]], []],
    );
    t.true(pages.every((p, i) => p.body.total === 3 && p.body.page === i + 1 && p.body.offset === 1));
    const byOffset = await u.api.get('/router/payments?offset=2&page=2');
    t.deepEqual(
      byOffset.body.payments.map((x: { paymentId: string }) => x.paymentId),
      [ids[0]],
    );
    for (const query of ['page=0', 'page=x', 'limit=2&offset=3', 'offset=1001']) {
      const r = await u.api.get(`/router/payments?${query}`);
      t.is(r.status, 400, `${query}: ${r.text}`);
      t.is(r.body.code, 'BCK.ROUTER.0001', query);
    }
    // The CSV page says how many rows match in all.
    const csvPage = await u.api.get('/router/payments?format=csv&limit=1&page=2');
    t.is(csvPage.headers.get('x-total-count'), '3');
    t.is(csvPage.text.trim().split('\r\n').length, 2);
  });

  test('mode A: a target nested thousands of levels deep is refused as malformed (400), not a 500; nothing paid', async (t) => {
    const { u, delegationId } = await paidUser();
    const deep = (levels: number) => `${'['.repeat(levels)}0${']'.repeat(levels)}`;
    // The USDC options (the delegation pays USD; the v2 merchant offers EURC first).
    const usdc = (accepts: unknown): unknown =>
      (accepts as { extra?: { name?: string } }[]).find((o) => o.extra?.name === 'USDC');
    const option = usdc((await v2Target(m.v2)).accepts);
    const v1Option = usdc((await v1Target()).accepts);
    // Raw bodies: JSON.stringify itself overflows on these (the hazard); the proxy's JSON.parse does not.
    const post = (target: string) =>
      u.api.raw(
        'POST',
        '/router/payments',
        `{"delegationId":"${delegationId}","protocol":"x402","requestId":"${rid()}","target":${target}}`,
      );
    const bodies = {
      'v2 extensions': `{"accepts":[${JSON.stringify(option)}],"extensions":{"x":${deep(4_200)}}}`,
      'v2 resource': `{"accepts":[${JSON.stringify(option)}],"resource":{"url":"https://m.test/","x":${deep(4_200)}}}`,
      'v1 accepts': `{"x402Version":1,"accepts":[${JSON.stringify(v1Option).replace(/}$/, `,"x":${deep(4_200)}}`)}]}`,
    };
    for (const [name, target] of Object.entries(bodies)) {
      const r = await post(target);
      t.is(r.status, 400, `${name}: ${r.text}`);
      t.is(r.body.code, 'BCK.ROUTER.0001', name);
      t.is(JSON.parse(r.body.params).reason, 'malformed_option', name);
      t.regex(r.body.details, /nested deeper than 64 levels/, name);
    }
    // Just inside the bound the same offer is paid: only the depth was refused.
    const ok = await post(`{"accepts":[${JSON.stringify(option)}],"extensions":{"x":${deep(62)}}}`);
    t.is(ok.status, 200, ok.text);
    t.is(
      await stack().ctx.db.em().count(RouterPayment, { userId: u.userId }),
      1,
      'only the accepted offer left a payment row',
    );
  });
}, PAID_ENV);
