// Orders, balances and minting, on SQLite and PostgreSQL, through the real processes. Every money
// assertion is also checked in the database: token balances, lots, orders and both ledgers.
import { getAddress } from 'viem';
import { faucet } from '../../shared/settlement/token-ledger.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { TOKEN_ADDRESS, attachPlan, createAgent, createPlan, testAddress } from '../support/registry-builders.js';
import type { Stack } from '../support/stack.js';

const ORDER_KEYS = ['amountPaid', 'asset', 'balance', 'creditsGranted', 'holderAddress', 'orderId', 'planId', 'txId'];
const ASSET = getAddress(TOKEN_ADDRESS);

async function rows(s: Stack, sql: string, params: unknown[] = []): Promise<Record<string, any>[]> {
  return s.ctx.db.em().execute(sql, params);
}

async function tokenBalance(s: Stack, address: string): Promise<bigint> {
  const r = await rows(s, 'select cast(balance as text) as b from token_balance where address = ? and asset = ?', [
    address,
    ASSET,
  ]);
  return BigInt(r[0]?.b ?? '0');
}

async function ledgerSum(s: Stack, planId: string, holder: string): Promise<bigint> {
  const r = await rows(
    s,
    'select cast(delta as text) as d from credit_ledger where plan_id = ? and holder_address = ?',
    [Number(planId), holder],
  );
  return r.reduce((a, x) => a + BigInt(x.d), 0n);
}

async function count(s: Stack, table: string, where = '1 = 1', params: unknown[] = []): Promise<number> {
  return Number((await rows(s, `select count(*) as n from ${table} where ${where}`, params))[0]?.n);
}

async function journalSumsToZero(s: Stack, txId: string): Promise<{ rows: number; sum: bigint }> {
  const r = await rows(s, 'select cast(delta as text) as d from token_ledger where tx_id = ?', [txId]);
  return { rows: r.length, sum: r.reduce((a, x) => a + BigInt(x.d), 0n) };
}

forEachDb(({ stack, test }) => {
  test('order: pays every receiver from the buyer wallet, mints the credits, records the order, one transaction', async (t) => {
    const s = stack();
    const owner = await s.user();
    const buyer = await s.user();
    const [r1, r2] = [getAddress(testAddress(0xa001)), getAddress(testAddress(0xa002))];
    const plan = await createPlan(owner.api, {
      priceConfig: {
        priceType: 'FIXED_PRICE',
        tokenAddress: TOKEN_ADDRESS,
        amounts: ['700000', 300000],
        receivers: [r1, r2],
      },
      creditsConfig: { creditsType: 'FIXED', amount: '25', minAmount: '2' },
    });
    await faucet(s.ctx, buyer.walletAddress, ASSET, 2_500_000n);

    const r = await buyer.api.post(`/protocol/plans/${plan.planId}/order`);
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(Object.keys(r.body).sort(), ORDER_KEYS);
    t.like(r.body, {
      planId: plan.planId,
      holderAddress: buyer.walletAddress,
      creditsGranted: '25',
      amountPaid: '1000000',
      asset: ASSET,
      balance: '25',
    });
    t.regex(r.body.orderId, /^[0-9a-f-]{36}$/);
    t.regex(r.body.txId, /^[0-9a-f-]{36}$/);

    // Wallets: the buyer paid the sum, each receiver got its amount.
    t.is(await tokenBalance(s, buyer.walletAddress), 1_500_000n);
    t.is(await tokenBalance(s, r1), 700_000n);
    t.is(await tokenBalance(s, r2), 300_000n);
    // Journal: one debit and one credit per receiver, summing to zero.
    t.deepEqual(await journalSumsToZero(s, r.body.txId), { rows: 4, sum: 0n });
    // Order row, lot and credit ledger.
    const order = await rows(
      s,
      'select plan_id, buyer_user_id, buyer_address, asset, cast(amount_paid as text) as paid, cast(credits as text) as credits, tx_id from plan_order where id = ?',
      [r.body.orderId],
    );
    t.is(order.length, 1);
    t.like(order[0], {
      buyer_user_id: buyer.userId,
      buyer_address: buyer.walletAddress,
      asset: ASSET,
      paid: '1000000',
      credits: '25',
      tx_id: r.body.txId,
    });
    t.is(Number(order[0]?.plan_id), Number(plan.planId));
    t.is(
      await count(s, 'credit_lot', 'plan_id = ? and holder_address = ? and expires_at is null', [
        Number(plan.planId),
        buyer.walletAddress,
      ]),
      1,
    );
    const ledger = await rows(s, 'select kind, reference from credit_ledger where plan_id = ? and holder_address = ?', [
      Number(plan.planId),
      buyer.walletAddress,
    ]);
    t.deepEqual(
      ledger.map((x) => [x.kind, x.reference]),
      [['order', r.body.orderId]],
    );

    // A second order adds up.
    const again = await buyer.api.post(`/protocol/plans/${plan.planId}/order`);
    t.is(again.status, 200);
    t.is(again.body.balance, '50');
    t.not(again.body.orderId, r.body.orderId);
    t.is(await ledgerSum(s, plan.planId, buyer.walletAddress), 50n);
    t.is(await tokenBalance(s, buyer.walletAddress), 500_000n);

    const bal = await buyer.api.get(`/protocol/plans/${plan.planId}/balance/${buyer.walletAddress}`);
    t.deepEqual(bal.body, {
      planId: plan.planId,
      holderAddress: buyer.walletAddress,
      balance: '50',
      isSubscriber: true,
    });
  });

  test('order with a short wallet: 402 BCK.PAYMENT.0001 and nothing moved or recorded', async (t) => {
    const s = stack();
    const owner = await s.user();
    const buyer = await s.user();
    const r1 = getAddress(testAddress(0xb001));
    const r2 = getAddress(testAddress(0xb002));
    // The first receiver alone is covered, the sum is not: the first movement must roll back too.
    const plan = await createPlan(owner.api, {
      priceConfig: {
        priceType: 'FIXED_PRICE',
        tokenAddress: TOKEN_ADDRESS,
        amounts: ['600000', '600000'],
        receivers: [r1, r2],
      },
    });
    await faucet(s.ctx, buyer.walletAddress, ASSET, 1_000_000n);
    const journal = () => count(s, 'token_ledger', 'address in (?, ?, ?)', [buyer.walletAddress, r1, r2]);
    const journalBefore = await journal();

    const r = await buyer.api.post(`/protocol/plans/${plan.planId}/order`);
    t.is(r.status, 402);
    t.is(r.body.code, 'BCK.PAYMENT.0001');
    t.is(r.body.httpStatus, 402);

    t.is(await tokenBalance(s, buyer.walletAddress), 1_000_000n);
    t.is(await tokenBalance(s, r1), 0n);
    t.is(await count(s, 'token_balance', 'address in (?, ?)', [r1, r2]), 0);
    t.is(await journal(), journalBefore);
    t.is(await count(s, 'credit_lot', 'plan_id = ?', [Number(plan.planId)]), 0);
    t.is(await count(s, 'credit_ledger', 'plan_id = ?', [Number(plan.planId)]), 0);
    t.is(await count(s, 'plan_order', 'plan_id = ?', [Number(plan.planId)]), 0);

    // A wallet that never held the asset is refused the same way.
    const poor = await s.user();
    const p = await poor.api.post(`/protocol/plans/${plan.planId}/order`);
    t.is(p.status, 402);
    t.is(p.body.code, 'BCK.PAYMENT.0001');
  });

  test('order: unknown plan 404 BCK.PROTOCOL.0003, unlisted plan 403 BCK.PROTOCOL.0062 (even for the owner)', async (t) => {
    const s = stack();
    const owner = await s.user();
    const buyer = await s.user();
    for (const id of ['999999', 'abc', '0', '99999999999']) {
      const r = await buyer.api.post(`/protocol/plans/${id}/order`);
      t.is(r.status, 404, id);
      t.is(r.body.code, 'BCK.PROTOCOL.0003');
    }
    const plan = await createPlan(owner.api);
    await faucet(s.ctx, buyer.walletAddress, ASSET, 10_000_000n);
    await faucet(s.ctx, owner.walletAddress, ASSET, 10_000_000n);
    t.is((await owner.api.put(`/protocol/plans/${plan.planId}/list/false`)).status, 200);
    for (const u of [buyer, owner]) {
      const r = await u.api.post(`/protocol/plans/${plan.planId}/order`);
      t.is(r.status, 403);
      t.is(r.body.code, 'BCK.PROTOCOL.0062');
    }
    t.is(await tokenBalance(s, buyer.walletAddress), 10_000_000n);
    t.is(await count(s, 'plan_order', 'plan_id = ?', [Number(plan.planId)]), 0);
    // Listed again: purchasable again.
    t.is((await owner.api.put(`/protocol/plans/${plan.planId}/list/true`)).status, 200);
    t.is((await buyer.api.post(`/protocol/plans/${plan.planId}/order`)).status, 200);
  });

  test('balance: exact shape, checksummed holder, "0" for an account without credits, 404 and 400 cases', async (t) => {
    const s = stack();
    const owner = await s.user();
    const other = await s.user();
    const plan = await createPlan(owner.api);
    // An account with no credits: balance "0".
    const lower = other.walletAddress.toLowerCase();
    const r = await owner.api.get(`/protocol/plans/${plan.planId}/balance/${lower}`);
    t.is(r.status, 200);
    t.deepEqual(r.body, { planId: plan.planId, holderAddress: other.walletAddress, balance: '0', isSubscriber: false });
    // Unknown plan.
    const u = await owner.api.get(`/protocol/plans/987654/balance/${other.walletAddress}`);
    t.is(u.status, 404);
    t.is(u.body.code, 'BCK.PROTOCOL.0003');
    // An address that is no account and never held credits of the plan.
    const stranger = getAddress(testAddress(0xc0ffee));
    const h = await owner.api.get(`/protocol/plans/${plan.planId}/balance/${stranger}`);
    t.is(h.status, 404);
    t.is(h.body.code, 'BCK.PROTOCOL.0005');
    // Malformed addresses.
    for (const bad of [
      '0x123',
      'not-an-address',
      `${other.walletAddress}00`,
      '0xZZ36CbD53842c5426634e7929541eC2318f3dCF7',
    ]) {
      const m = await owner.api.get(`/protocol/plans/${plan.planId}/balance/${bad}`);
      t.is(m.status, 400, bad);
      t.is(m.body.code, 'BCK.HTTP.0400');
    }
    // Once credits were minted to it, the stranger's address is known.
    t.is(
      (await owner.api.post('/protocol/plans/mint', { planId: plan.planId, holderAddress: stranger, amount: 3 }))
        .status,
      200,
    );
    const k = await other.api.get(`/protocol/plans/${plan.planId}/balance/${stranger}`);
    t.deepEqual(k.body, { planId: plan.planId, holderAddress: stranger, balance: '3', isSubscriber: true });
  });

  test('mint: the owner mints (exact shape, ledger row); anyone else 403 BCK.PROTOCOL.0010; unknown plan 404', async (t) => {
    const s = stack();
    const owner = await s.user();
    const intruder = await s.user();
    const holder = await s.user();
    const plan = await createPlan(owner.api);
    const r = await owner.api.post('/protocol/plans/mint', {
      planId: plan.planId,
      holderAddress: holder.walletAddress.toLowerCase(),
      amount: 5,
    });
    t.is(r.status, 200);
    t.deepEqual(r.body, {
      success: true,
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: '5',
      balance: '5',
    });
    const big = await owner.api.post('/protocol/plans/mint', {
      planId: Number(plan.planId),
      holderAddress: holder.walletAddress,
      amount: '9007199254740993',
    });
    t.is(big.status, 200);
    t.is(big.body.balance, '9007199254740998', 'no precision lost above 2^53');
    t.is(await ledgerSum(s, plan.planId, holder.walletAddress), 9_007_199_254_740_998n);
    const kinds = await rows(s, 'select kind from credit_ledger where plan_id = ? order by created_at', [
      Number(plan.planId),
    ]);
    t.deepEqual(
      kinds.map((x) => x.kind),
      ['mint', 'mint'],
    );

    const f = await intruder.api.post('/protocol/plans/mint', {
      planId: plan.planId,
      holderAddress: intruder.walletAddress,
      amount: 5,
    });
    t.is(f.status, 403);
    t.is(f.body.code, 'BCK.PROTOCOL.0010');
    const fe = await intruder.api.post('/protocol/plans/mintExpirable', {
      planId: plan.planId,
      holderAddress: intruder.walletAddress,
      amount: 5,
      durationSecs: 60,
    });
    t.is(fe.status, 403);
    t.is(fe.body.code, 'BCK.PROTOCOL.0010');
    t.is(await count(s, 'credit_lot', 'holder_address = ?', [intruder.walletAddress]), 0);

    for (const planId of ['424242', 'plan-x']) {
      const n = await owner.api.post('/protocol/plans/mint', {
        planId,
        holderAddress: holder.walletAddress,
        amount: 1,
      });
      t.is(n.status, 404, planId);
      t.is(n.body.code, 'BCK.PROTOCOL.0003');
    }
    // The owner may mint on an unlisted plan.
    await owner.api.put(`/protocol/plans/${plan.planId}/list/false`);
    t.is(
      (
        await owner.api.post('/protocol/plans/mint', {
          planId: plan.planId,
          holderAddress: holder.walletAddress,
          amount: 1,
        })
      ).status,
      200,
    );
  });

  test('mint: invalid bodies are 400 BCK.HTTP.0400, never 500', async (t) => {
    const s = stack();
    const owner = await s.user();
    const plan = await createPlan(owner.api);
    const ok = { planId: plan.planId, holderAddress: owner.walletAddress, amount: 1 };
    const bad: Record<string, unknown>[] = [
      {},
      { ...ok, amount: 0 },
      { ...ok, amount: -1 },
      { ...ok, amount: 1.5 },
      { ...ok, amount: '1.5' },
      { ...ok, amount: 'abc' },
      { ...ok, amount: '9223372036854775808' },
      { ...ok, amount: 2 ** 53 },
      { ...ok, amount: '01' },
      { ...ok, holderAddress: '0x1234' },
      { ...ok, holderAddress: 42 },
      { ...ok, planId: { id: 1 } },
      { ...ok, planId: null },
    ];
    for (const body of bad) {
      const r = await owner.api.post('/protocol/plans/mint', body);
      t.is(r.status, 400, JSON.stringify(body));
      t.is(r.body.code, 'BCK.HTTP.0400');
    }
    for (const durationSecs of [0, -5, 1.5, '10', 400_000_000]) {
      const r = await owner.api.post('/protocol/plans/mintExpirable', { ...ok, durationSecs });
      t.is(r.status, 400, String(durationSecs));
    }
    t.is((await owner.api.post('/protocol/plans/mint', { ...ok, amount: '9223372036854775807' })).status, 200);
  });

  test('mintExpirable: credits count until they expire, then stop counting and cannot be burnt', async (t) => {
    const s = stack();
    const owner = await s.user();
    const holder = await s.user();
    const plan = await createPlan(owner.api);
    const agent = await createAgent(owner.api);
    await attachPlan(owner.api, agent.agentId, plan.planId);

    const r = await owner.api.post('/protocol/plans/mintExpirable', {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: '4',
      durationSecs: 4,
    });
    t.is(r.status, 200);
    t.like(r.body, {
      success: true,
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: '4',
      balance: '4',
    });
    t.true(Math.abs(Date.parse(r.body.expiresAt) - (Date.now() + 4000)) < 1500);
    t.is(await count(s, 'credit_lot', 'plan_id = ? and expires_at is not null', [Number(plan.planId)]), 1);
    t.is(
      (await rows(s, 'select kind from credit_ledger where plan_id = ?', [Number(plan.planId)]))[0]?.kind,
      'mint_expirable',
    );

    // Initialize while the credits are live; redeem after they expired.
    const token = await holder.api.get(`/protocol/token/${plan.planId}/${agent.agentId}`);
    t.is(token.status, 200);
    const init = await owner.api.post(`/protocol/agents/initialize/${agent.agentId}`, {
      accessToken: token.body.accessToken,
      endpoint: 'https://agent.example.com/api/v1/ask',
      httpVerb: 'POST',
      maxCredits: 2,
    });
    t.is(init.status, 200);

    // Wait past the expiry itself (not a fixed sleep: a loaded machine may have used part of the lifetime).
    await new Promise((res) => setTimeout(res, Math.max(0, Date.parse(r.body.expiresAt) - Date.now()) + 300));
    const bal = await holder.api.get(`/protocol/plans/${plan.planId}/balance/${holder.walletAddress}`);
    t.deepEqual(bal.body, {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      balance: '0',
      isSubscriber: false,
    });
    const red = await owner.api.post('/protocol/plans/redeem', {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: 2,
      proof: init.body.proof,
    });
    t.is(red.status, 402);
    t.is(red.body.code, 'BCK.CREDITS.0003');
    t.is(
      (await rows(s, 'select cast(remaining as text) as r from credit_lot where plan_id = ?', [Number(plan.planId)]))[0]
        ?.r,
      '4',
    );
    t.is(await count(s, 'credit_burn', 'agent_request_id = ?', [init.body.agentRequestId]), 0);
    const tokenAfter = await holder.api.get(`/protocol/token/${plan.planId}/${agent.agentId}`);
    t.is(tokenAfter.status, 402);
    t.is(tokenAfter.body.code, 'BCK.CREDITS.0003');
  });

  test('burns take the soonest-expiring lot first, never-expiring lots last', async (t) => {
    const s = stack();
    const owner = await s.user();
    const holder = await s.user();
    const plan = await createPlan(owner.api, { creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '1' } });
    const agent = await createAgent(owner.api);
    await attachPlan(owner.api, agent.agentId, plan.planId);
    const mint = (body: Record<string, unknown>, path = 'mint') =>
      owner.api.post(`/protocol/plans/${path}`, { planId: plan.planId, holderAddress: holder.walletAddress, ...body });
    t.is((await mint({ amount: 5 })).status, 200);
    t.is((await mint({ amount: 3, durationSecs: 7200 }, 'mintExpirable')).status, 200);
    t.is((await mint({ amount: 2, durationSecs: 3600 }, 'mintExpirable')).status, 200);

    const token = await holder.api.get(`/protocol/token/${plan.planId}/${agent.agentId}`);
    const init = await owner.api.post(`/protocol/agents/initialize/${agent.agentId}`, {
      accessToken: token.body.accessToken,
      endpoint: 'https://agent.example.com/api/v1/ask',
      httpVerb: 'post',
      maxCredits: '4',
    });
    t.is(init.status, 200, JSON.stringify(init.body));
    const red = await owner.api.post('/protocol/plans/redeem', {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: '4',
      proof: init.body.proof,
    });
    t.is(red.status, 200);
    t.is(red.body.balance, '6');
    const lots = await rows(
      s,
      'select cast(remaining as text) as r, expires_at from credit_lot where plan_id = ? order by created_at',
      [Number(plan.planId)],
    );
    // [never: 5, 2h: 3 -> 1, 1h: 2 -> 0]
    t.deepEqual(
      lots.map((l) => l.r),
      ['5', '1', '0'],
    );
    t.is(await ledgerSum(s, plan.planId, holder.walletAddress), 6n);
  });

  test('every credit endpoint requires an API key (401)', async (t) => {
    const anon = apiClient(stack().baseUrl);
    const calls = [
      anon.post('/protocol/plans/1/order'),
      anon.get(`/protocol/plans/1/balance/${testAddress(1)}`),
      anon.post('/protocol/plans/mint', {}),
      anon.post('/protocol/plans/mintExpirable', {}),
      anon.post('/protocol/plans/redeem', {}),
      anon.post('/protocol/agent-sub-tasks', {}),
      anon.get('/protocol/token/1/did:payroute:sandbox:00'),
      anon.post('/protocol/agents/initialize/did:payroute:sandbox:00', {}),
    ];
    for (const r of await Promise.all(calls)) {
      t.is(r.status, 401);
      t.is(r.body.code, 'BCK.AUTH.0001');
    }
  });
});
