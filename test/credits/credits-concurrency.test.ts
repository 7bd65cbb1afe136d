// Concurrency of every credit spend, on SQLite and PostgreSQL, through the real processes:
// the database decides each burn, so parallel requests can never burn more than the balance, a request more than
// its maxCredits, or one burn key twice.
import { getAddress } from 'viem';
import { faucet } from '../../shared/settlement/token-ledger.js';
import { apiClient } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { TOKEN_ADDRESS, attachPlan, createAgent, createPlan, testAddress } from '../support/registry-builders.js';
import type { Stack } from '../support/stack.js';

const ASK = 'https://agent.example.com/api/v1/ask';
const ASSET = getAddress(TOKEN_ADDRESS);

const tally = (statuses: number[]): Record<number, number> =>
  statuses.reduce<Record<number, number>>((acc, s) => {
    acc[s] = (acc[s] ?? 0) + 1;
    return acc;
  }, {});

async function sqlRows(s: Stack, sql: string, params: unknown[]): Promise<Record<string, any>[]> {
  return s.ctx.db.em().execute(sql, params);
}

async function burnedLedgerSum(s: Stack, planId: string, holder: string): Promise<bigint> {
  const rows = await sqlRows(
    s,
    'select cast(delta as text) as d from credit_ledger where plan_id = ? and holder_address = ? and delta < 0',
    [Number(planId), holder],
  );
  return rows.reduce((a, r) => a - BigInt(r.d), 0n);
}

async function subscribed(s: Stack) {
  const owner = await s.user();
  const holder = await s.user();
  const plan = await createPlan(owner.api, { creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '1' } });
  const agent = await createAgent(owner.api);
  await attachPlan(owner.api, agent.agentId, plan.planId);
  const token = async () =>
    (await holder.api.get(`/protocol/token/${plan.planId}/${agent.agentId}`)).body.accessToken as string;
  const mint = async (amount: number) => {
    const r = await owner.api.post('/protocol/plans/mint', {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount,
    });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  };
  const initialize = async (accessToken: string, maxCredits: number) => {
    const r = await owner.api.post(`/protocol/agents/initialize/${agent.agentId}`, {
      accessToken,
      endpoint: ASK,
      httpVerb: 'POST',
      maxCredits,
    });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body as { agentRequestId: string; proof: string };
  };
  const redeem = (proof: string, amount: number) =>
    owner.api.post('/protocol/plans/redeem', {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount,
      proof,
    });
  const balance = async () =>
    (await holder.api.get(`/protocol/plans/${plan.planId}/balance/${holder.walletAddress}`)).body.balance as string;
  return { owner, holder, plan, agent, token, mint, initialize, redeem, balance };
}

forEachDb(({ stack, test }) => {
  test('200 parallel redeems of distinct agent requests against a balance of 37: exactly 37 burn', async (t) => {
    const s = stack();
    const K = 37;
    const w = await subscribed(s);
    await w.mint(K);
    const accessToken = await w.token();
    const requests = [];
    for (let i = 0; i < 200; i += 10) {
      requests.push(...(await Promise.all(Array.from({ length: 10 }, () => w.initialize(accessToken, 1)))));
    }
    t.is(requests.length, 200);

    const results = await Promise.all(requests.map((r) => w.redeem(r.proof, 1)));
    const statuses = tally(results.map((r) => r.status));
    t.deepEqual(statuses, { 200: K, 402: 200 - K });
    for (const r of results.filter((x) => x.status === 402)) t.is(r.body.code, 'BCK.CREDITS.0003');
    t.is(await w.balance(), '0');
    t.is(await burnedLedgerSum(s, w.plan.planId, w.holder.walletAddress), BigInt(K));
    const burns = await sqlRows(
      s,
      'select count(*) as n from credit_burn b join agent_request r on r.id = b.agent_request_id where r.plan_id = ?',
      [Number(w.plan.planId)],
    );
    t.is(Number(burns[0]?.n), K);
    const lots = await sqlRows(s, 'select cast(remaining as text) as r from credit_lot where plan_id = ?', [
      Number(w.plan.planId),
    ]);
    t.deepEqual(
      lots.map((l) => l.r),
      ['0'],
    );
  });

  test('two admin processes on one database: 100 parallel redeems split across them against 23 credits burn exactly 23', async (t) => {
    const s = stack();
    const K = 23;
    const w = await subscribed(s);
    await w.mint(K);
    const accessToken = await w.token();
    const requests = await Promise.all(Array.from({ length: 100 }, () => w.initialize(accessToken, 1)));
    // Same issuer as the first process (the spawn helper's PROXY_PORT=0 would change the default PUBLIC_URL).
    const second = await s.spawn('admin', { PUBLIC_URL: s.ctx.config.publicUrl });
    try {
      const other = apiClient(`${second.url}/api/v1`, w.owner.apiKey);
      const body = (proof: string) => ({
        planId: w.plan.planId,
        holderAddress: w.holder.walletAddress,
        amount: 1,
        proof,
      });
      // Each proof is sent to both processes at once: besides the balance, the once-only rule is contended too.
      const results = await Promise.all(
        requests.flatMap((r) => [
          w.owner.api.post('/protocol/plans/redeem', body(r.proof)),
          other.post('/protocol/plans/redeem', body(r.proof)),
        ]),
      );
      const statuses = tally(results.map((r) => r.status));
      t.is(statuses[200], K, JSON.stringify(statuses));
      t.is((statuses[402] ?? 0) + (statuses[409] ?? 0), 200 - K);
      t.is(await w.balance(), '0');
      t.is(await burnedLedgerSum(s, w.plan.planId, w.holder.walletAddress), BigInt(K));
    } finally {
      await second.stop();
    }
  });

  test('20 parallel redeems of the same agent request: exactly one burn, the rest 409', async (t) => {
    const s = stack();
    const w = await subscribed(s);
    await w.mint(100);
    const req = await w.initialize(await w.token(), 3);
    const results = await Promise.all(Array.from({ length: 20 }, () => w.redeem(req.proof, 3)));
    t.deepEqual(tally(results.map((r) => r.status)), { 200: 1, 409: 19 });
    for (const r of results.filter((x) => x.status === 409)) t.is(r.body.code, 'BCK.PROTOCOL.0023');
    t.is(await w.balance(), '97');
    t.is(await burnedLedgerSum(s, w.plan.planId, w.holder.walletAddress), 3n);
  });

  test('parallel sub-tasks: one burn per tag, the request never exceeds maxCredits', async (t) => {
    const s = stack();
    const w = await subscribed(s);
    await w.mint(100);
    const req = await w.initialize(await w.token(), 10);
    const sub = (tag: string, creditsToRedeem: number) =>
      w.owner.api.post('/protocol/agent-sub-tasks', { agentRequestId: req.agentRequestId, creditsToRedeem, tag });
    // 20 copies of one tag: one burn, 19 duplicates.
    const same = await Promise.all(Array.from({ length: 20 }, () => sub('same', 2)));
    t.true(same.every((r) => r.status === 200));
    t.is(same.filter((r) => r.body.duplicate === true).length, 19);
    // 30 distinct tags of 1 credit against the 8 left in the request: exactly 8 burn.
    const distinct = await Promise.all(Array.from({ length: 30 }, (_, i) => sub(`t${i}`, 1)));
    t.deepEqual(tally(distinct.map((r) => r.status)), { 200: 8, 400: 22 });
    for (const r of distinct.filter((x) => x.status === 400)) t.is(r.body.code, 'BCK.PROTOCOL.0025');
    t.is(await w.balance(), '90');
    t.is(await burnedLedgerSum(s, w.plan.planId, w.holder.walletAddress), 10n);
  });

  test('parallel orders against a wallet funding exactly 7: exactly 7 orders, the rest 402', async (t) => {
    const s = stack();
    const owner = await s.user();
    const buyer = await s.user();
    const receiver = getAddress(testAddress(0xd00d));
    const plan = await createPlan(owner.api, {
      priceConfig: {
        priceType: 'FIXED_PRICE',
        tokenAddress: TOKEN_ADDRESS,
        amounts: ['150000'],
        receivers: [receiver],
      },
      creditsConfig: { creditsType: 'FIXED', amount: '3', minAmount: '1' },
    });
    await faucet(s.ctx, buyer.walletAddress, ASSET, 7n * 150_000n + 149_999n);
    const results = await Promise.all(
      Array.from({ length: 30 }, () => buyer.api.post(`/protocol/plans/${plan.planId}/order`)),
    );
    t.deepEqual(tally(results.map((r) => r.status)), { 200: 7, 402: 23 });
    const bal = await buyer.api.get(`/protocol/plans/${plan.planId}/balance/${buyer.walletAddress}`);
    t.is(bal.body.balance, '21');
    const wallet = await sqlRows(
      s,
      'select address, cast(balance as text) as b from token_balance where address in (?, ?) and asset = ?',
      [buyer.walletAddress, receiver, ASSET],
    );
    t.deepEqual(Object.fromEntries(wallet.map((x) => [x.address, x.b])), {
      [buyer.walletAddress]: '149999',
      [receiver]: '1050000',
    });
    const orders = await sqlRows(s, 'select count(*) as n from plan_order where plan_id = ?', [Number(plan.planId)]);
    t.is(Number(orders[0]?.n), 7);
  });
});
