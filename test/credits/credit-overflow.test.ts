// A holder's credits of a plan stay within the signed 64-bit range (BIGINT columns; what does not fit is a 400).
// Minting 2^63 - 1 twice used to answer a balance of "18446744073709551614". The bound is the conditional UPDATE
// of credit_holding (shared/credits/store/lots.ts), so it holds for mint, mintExpirable and order credits, under
// concurrency and across processes, and nothing of a refused change is left behind.
import { getAddress } from 'viem';
import { creditHeadroom } from '../../shared/credits/store/lots.js';
import { faucet } from '../../shared/settlement/token-ledger.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { TOKEN_ADDRESS, attachPlan, createAgent, createPlan } from '../support/registry-builders.js';
import type { Stack } from '../support/stack.js';
import { delegation, fundUsdc, paymentRequired, permission } from '../support/x402.js';

const MAX = 9_223_372_036_854_775_807n;
const ASSET = getAddress(TOKEN_ADDRESS);

async function rows(s: Stack, sql: string, params: unknown[]): Promise<Record<string, any>[]> {
  return s.ctx.db.em().execute(sql, params);
}

/** What the database holds for the pair: lots, ledger rows and the running total, read independently. */
async function stored(s: Stack, planId: string, holder: string) {
  const id = Number(planId);
  const lots = await rows(
    s,
    'select cast(remaining as text) as r from credit_lot where plan_id = ? and holder_address = ? order by created_at, id',
    [id, holder],
  );
  const ledger = await rows(
    s,
    'select kind, cast(delta as text) as d, reference from credit_ledger where plan_id = ? and holder_address = ? order by created_at, kind',
    [id, holder],
  );
  const holding = await rows(
    s,
    'select cast(total as text) as t from credit_holding where plan_id = ? and holder_address = ?',
    [id, holder],
  );
  return {
    lots: lots.map((l) => BigInt(l.r)),
    ledger: ledger.map((l) => ({ kind: String(l.kind), delta: BigInt(l.d), reference: l.reference })),
    ledgerSum: ledger.reduce((a, l) => a + BigInt(l.d), 0n),
    total: holding[0] === undefined ? undefined : BigInt(holding[0].t),
  };
}

async function setup(s: Stack, creditsAmount = '10') {
  const owner = await s.user();
  const holder = await s.user();
  const plan = await createPlan(owner.api, {
    creditsConfig: { creditsType: 'FIXED', amount: creditsAmount, minAmount: '1' },
  });
  const mint = (amount: bigint | string, path = 'mint', extra: Record<string, unknown> = {}) =>
    owner.api.post(`/protocol/plans/${path}`, {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: String(amount),
      ...extra,
    });
  const balance = async () =>
    (await holder.api.get(`/protocol/plans/${plan.planId}/balance/${holder.walletAddress}`)).body.balance as string;
  return { owner, holder, plan, mint, balance };
}

const tally = (statuses: number[]): Record<number, number> =>
  statuses.reduce<Record<number, number>>((acc, st) => {
    acc[st] = (acc[st] ?? 0) + 1;
    return acc;
  }, {});

forEachDb(({ stack, test }) => {
  test('minting 2^63 - 1 twice: the second mint is 400 and changes nothing', async (t) => {
    const s = stack();
    const w = await setup(s);
    const first = await w.mint(MAX);
    t.is(first.status, 200, first.text);
    t.is(first.body.balance, MAX.toString());
    const second = await w.mint(MAX);
    t.is(second.status, 400, second.text);
    t.is(second.body.code, 'BCK.HTTP.0400');
    t.is(second.body.details, `${w.holder.walletAddress} would hold more than ${MAX} credits of plan ${w.plan.planId}`);
    const one = await w.mint(1n);
    t.is(one.status, 400, 'even one credit more');
    t.is(await w.balance(), MAX.toString());
    const st = await stored(s, w.plan.planId, w.holder.walletAddress);
    t.deepEqual(st.lots, [MAX]);
    t.deepEqual(
      st.ledger.map((l) => [l.kind, l.delta]),
      [['mint', MAX]],
    );
    t.is(st.total, MAX);
    // Another holder, or the same holder's credits of another plan, are their own totals.
    const other = await w.owner.api.post('/protocol/plans/mint', {
      planId: w.plan.planId,
      holderAddress: w.owner.walletAddress,
      amount: MAX.toString(),
    });
    t.is(other.status, 200);
  });

  test('mintExpirable is bounded the same way: up to exactly 2^63 - 1, then 400', async (t) => {
    const s = stack();
    const w = await setup(s);
    t.is((await w.mint(MAX - 10n)).status, 200);
    const over = await w.mint(11n, 'mintExpirable', { durationSecs: 3600 });
    t.is(over.status, 400, over.text);
    t.is(over.body.code, 'BCK.HTTP.0400');
    const exact = await w.mint(10n, 'mintExpirable', { durationSecs: 3600 });
    t.is(exact.status, 200, exact.text);
    t.is(exact.body.balance, MAX.toString());
    const st = await stored(s, w.plan.planId, w.holder.walletAddress);
    t.deepEqual(st.lots, [MAX - 10n, 10n]);
    t.is(st.total, MAX);
    t.is(st.ledgerSum, MAX);
  });

  test('parallel mints across two admin processes that together would overflow: exactly the ones that fit apply', async (t) => {
    const s = stack();
    const w = await setup(s);
    const half = MAX / 2n + 1n; // two of these are 2^63: one fits, the second would not
    const second = await s.spawn('admin', { PUBLIC_URL: s.ctx.config.publicUrl });
    try {
      const other = apiClient(`${second.url}/api/v1`, w.owner.apiKey);
      const body = { planId: w.plan.planId, holderAddress: w.holder.walletAddress, amount: half.toString() };
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0 ? w.owner.api.post('/protocol/plans/mint', body) : other.post('/protocol/plans/mint', body),
        ),
      );
      t.deepEqual(tally(results.map((r) => r.status)), { 200: 1, 400: 7 }, results.map((r) => r.text).join('\n'));
      // Then smaller amounts in parallel: exactly as many as fit in what is left (MAX - half = half - 1).
      const small = (half - 2n) / 3n; // three fit, with room to spare for none more
      const more = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? w.owner.api : other).post('/protocol/plans/mint', { ...body, amount: small.toString() }),
        ),
      );
      t.deepEqual(tally(more.map((r) => r.status)), { 200: 3, 400: 5 });
    } finally {
      await second.stop();
    }
    const expected = MAX / 2n + 1n + 3n * ((MAX / 2n - 1n) / 3n);
    t.is(await w.balance(), expected.toString());
    const st = await stored(s, w.plan.planId, w.holder.walletAddress);
    t.is(st.total, expected);
    t.is(st.ledgerSum, expected);
    t.is(st.lots.length, 4);
  });

  test('order credits past the bound: 400, nothing paid, no order recorded; an order that fits still works', async (t) => {
    const s = stack();
    const w = await setup(s, '10'); // 1 USDC for 10 credits
    await faucet(s.ctx, w.holder.walletAddress, ASSET, 5_000_000n);
    t.is((await w.mint(MAX - 9n)).status, 200);
    const refused = await w.holder.api.post(`/protocol/plans/${w.plan.planId}/order`);
    t.is(refused.status, 400, refused.text);
    t.is(refused.body.code, 'BCK.HTTP.0400');
    const wallet = await rows(
      s,
      'select cast(balance as text) as b from token_balance where address = ? and asset = ?',
      [w.holder.walletAddress, ASSET],
    );
    t.is(wallet[0]?.b, '5000000', 'the wallet was not debited');
    t.is((await rows(s, 'select id from plan_order where plan_id = ?', [Number(w.plan.planId)])).length, 0);
    t.is(await w.balance(), (MAX - 9n).toString());

    const w2 = await setup(s, '9');
    await faucet(s.ctx, w2.holder.walletAddress, ASSET, 5_000_000n);
    t.is((await w2.mint(MAX - 9n)).status, 200);
    const fits = await w2.holder.api.post(`/protocol/plans/${w2.plan.planId}/order`);
    t.is(fits.status, 200, fits.text);
    t.is(fits.body.balance, MAX.toString());
  });

  test('erc4337 auto-order credits past the bound: refused (4xx), the wallet and the delegation cap untouched', async (t) => {
    const s = stack();
    const w = await setup(s, '10');
    const agent = await createAgent(w.owner.api);
    await attachPlan(w.owner.api, agent.agentId, w.plan.planId);
    await fundUsdc(s, w.holder.walletAddress, 5_000_000n);
    t.is((await w.mint(MAX - 5n)).status, 200);
    const d = await delegation(w.holder.api, { provider: 'erc4337', spendingLimitCents: 1000 });
    const p = await permission(w.holder.api, { planId: w.plan.planId, delegationId: d });
    // More than held, within one order: settle would buy the plan, whose 10 credits do not fit.
    const r = await w.owner.api.post('/x402/settle', {
      paymentRequired: paymentRequired({ planId: w.plan.planId }),
      x402AccessToken: p.x402AccessToken,
      maxAmount: (MAX - 2n).toString(),
      agentRequestId: 'overflow-1',
    });
    t.true(r.status >= 400 && r.status < 500, `${r.status} ${r.text}`);
    t.is(await w.balance(), (MAX - 5n).toString());
    t.like((await w.holder.api.get(`/delegation/${d}`)).body, { amountSpentCents: '0' });
    const wallet = await rows(
      s,
      'select cast(balance as text) as b from token_balance where address = ? and asset = ?',
      [w.holder.walletAddress, ASSET],
    );
    t.is(wallet[0]?.b, '5000000');
    t.is((await rows(s, 'select id from plan_order where plan_id = ?', [Number(w.plan.planId)])).length, 0);
  });

  test('an expired lot is written off by the next mint (ledger row "expire"), so it no longer counts against the bound', async (t) => {
    const s = stack();
    const w = await setup(s);
    const agent = await createAgent(w.owner.api);
    await attachPlan(w.owner.api, agent.agentId, w.plan.planId);
    const expiring = await w.mint(MAX, 'mintExpirable', { durationSecs: 1 });
    t.is(expiring.status, 200);
    // Wait past the expiry itself, read from the answer (a loaded machine may have used part of the lifetime).
    await new Promise((res) => setTimeout(res, Math.max(0, Date.parse(expiring.body.expiresAt) - Date.now()) + 300));
    t.is(await w.balance(), '0');
    const headroom = () => creditHeadroom(s.ctx.db.em(), Number(w.plan.planId), w.holder.walletAddress, new Date());
    t.is(await headroom(), MAX, 'expired remainders do not count');
    const again = await w.mint(MAX);
    t.is(again.status, 200, again.text);
    t.is(again.body.balance, MAX.toString());
    const st = await stored(s, w.plan.planId, w.holder.walletAddress);
    t.deepEqual(st.lots, [0n, MAX]);
    // The write-off and the new lot share the mint's instant: ordered by kind.
    t.deepEqual(
      st.ledger.map((l) => [l.kind, l.delta]),
      [
        ['mint_expirable', MAX],
        ['expire', -MAX],
        ['mint', MAX],
      ],
    );
    const expiredLot = await rows(s, 'select id from credit_lot where plan_id = ? and remaining = 0', [
      Number(w.plan.planId),
    ]);
    t.is(st.ledger[1]?.reference, expiredLot[0]?.id, 'the write-off names the lot');
    t.is(st.total, MAX);
    t.is(st.ledgerSum, MAX);
    t.is(await headroom(), 0n);

    // Burns take from the total too: after a redeem, total = ledger sum = balance.
    const token = (await w.holder.api.get(`/protocol/token/${w.plan.planId}/${agent.agentId}`)).body.accessToken;
    const init = await w.owner.api.post(`/protocol/agents/initialize/${agent.agentId}`, {
      accessToken: token,
      endpoint: 'https://agent.example.com/api/v1/ask',
      httpVerb: 'POST',
      maxCredits: 3,
    });
    t.is(init.status, 200, init.text);
    const red = await w.owner.api.post('/protocol/plans/redeem', {
      planId: w.plan.planId,
      holderAddress: w.holder.walletAddress,
      amount: 3,
      proof: init.body.proof,
    });
    t.is(red.status, 200, red.text);
    const after = await stored(s, w.plan.planId, w.holder.walletAddress);
    t.is(after.total, MAX - 3n);
    t.is(after.ledgerSum, MAX - 3n);
    t.is(await w.balance(), (MAX - 3n).toString());
    t.is((await w.mint(3n)).status, 200, 'exactly the room the burn made');
    t.is((await w.mint(1n)).status, 400);
  });
});
