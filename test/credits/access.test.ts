// Access tokens, initialize, redeem and sub-tasks, on SQLite and PostgreSQL, through the real
// processes: success shapes, every refusal status, ownership, listing and the once-only burn rules.
import { decodeJwt } from 'jose';
import { createTokenSigner } from '../../shared/keys/signing-keys.js';
import { forEachDb } from '../support/matrix.js';
import {
  type AgentRecord,
  type PlanRecord,
  attachPlan,
  createAgent,
  createPlan,
} from '../support/registry-builders.js';
import type { Stack } from '../support/stack.js';

const ASK = 'https://agent.example.com/api/v1/ask';
const TASK = 'https://agent.example.com/api/v1/tasks/:taskId';

type User = Awaited<ReturnType<Stack['user']>>;

interface World {
  s: Stack;
  owner: User;
  holder: User;
  plan: PlanRecord;
  agent: AgentRecord;
}

/** An owner with a plan (minAmount 2) attached to an agent, and a holder with `credits` minted. */
async function world(s: Stack, credits = 10): Promise<World> {
  const owner = await s.user();
  const holder = await s.user();
  const plan = await createPlan(owner.api, { creditsConfig: { creditsType: 'FIXED', amount: '10', minAmount: '2' } });
  const agent = await createAgent(owner.api, {
    endpoints: [{ POST: ASK }, { GET: TASK }, { GET: 'https://agent.example.com/search?q=weather' }],
  });
  await attachPlan(owner.api, agent.agentId, plan.planId);
  if (credits > 0) {
    const m = await owner.api.post('/protocol/plans/mint', {
      planId: plan.planId,
      holderAddress: holder.walletAddress,
      amount: credits,
    });
    if (m.status !== 200) throw new Error(JSON.stringify(m.body));
  }
  return { s, owner, holder, plan, agent };
}

async function tokenOf(w: World): Promise<string> {
  const r = await w.holder.api.get(`/protocol/token/${w.plan.planId}/${w.agent.agentId}`);
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.accessToken;
}

async function init(w: World, extra: Record<string, unknown> = {}) {
  return w.owner.api.post(`/protocol/agents/initialize/${w.agent.agentId}`, {
    accessToken: await tokenOf(w),
    endpoint: ASK,
    httpVerb: 'POST',
    ...extra,
  });
}

async function balanceOf(w: World): Promise<string> {
  return (await w.holder.api.get(`/protocol/plans/${w.plan.planId}/balance/${w.holder.walletAddress}`)).body.balance;
}

async function ledger(w: World): Promise<{ kind: string; delta: bigint; reference: string }[]> {
  const rows: Record<string, any>[] = await w.s.ctx.db
    .em()
    .execute(
      'select kind, cast(delta as text) as delta, reference from credit_ledger where plan_id = ? and holder_address = ? order by created_at, kind',
      [Number(w.plan.planId), w.holder.walletAddress],
    );
  return rows.map((r) => ({ kind: r.kind, delta: BigInt(r.delta), reference: r.reference }));
}

async function burnedOf(s: Stack, agentRequestId: string): Promise<string> {
  const r: Record<string, any>[] = await s.ctx.db
    .em()
    .execute('select cast(burned as text) as b from agent_request where id = ?', [agentRequestId]);
  return r[0]?.b;
}

forEachDb(({ stack, test }) => {
  test('access token: exact shape, a service JWT for (plan, agent, holder) with the configured lifetime', async (t) => {
    const w = await world(stack());
    const r = await w.holder.api.get(`/protocol/token/${w.plan.planId}/${w.agent.agentId}`);
    t.is(r.status, 200);
    t.deepEqual(Object.keys(r.body).sort(), ['accessToken', 'agentId', 'expiresAt', 'holderAddress', 'planId']);
    t.like(r.body, { planId: w.plan.planId, agentId: w.agent.agentId, holderAddress: w.holder.walletAddress });
    const claims = decodeJwt(r.body.accessToken);
    t.like(claims, {
      planId: w.plan.planId,
      agentId: w.agent.agentId,
      holder: w.holder.walletAddress,
      sub: w.holder.walletAddress,
      aud: 'payroute:access',
    });
    t.is(new Date((claims.exp ?? 0) * 1000).toISOString(), r.body.expiresAt);
    t.true(Math.abs((claims.exp ?? 0) - (claims.iat ?? 0) - 86_400) <= 1);
    // Verifies against the published key set.
    const signer = createTokenSigner(w.s.ctx);
    t.is((await signer.verify(r.body.accessToken, 'payroute:access')).payload.holder, w.holder.walletAddress);
  });

  test('access token: 402 without credits, 404 for unknown, hidden or unattached plan/agent', async (t) => {
    const w = await world(stack());
    const broke = await w.s.user();
    const r = await broke.api.get(`/protocol/token/${w.plan.planId}/${w.agent.agentId}`);
    t.is(r.status, 402);
    t.is(r.body.code, 'BCK.CREDITS.0003');

    const cases: [string, string][] = [
      [`/protocol/token/9999999/${w.agent.agentId}`, 'BCK.PROTOCOL.0003'],
      [`/protocol/token/not-a-plan/${w.agent.agentId}`, 'BCK.PROTOCOL.0003'],
      [`/protocol/token/${w.plan.planId}/did:payroute:sandbox:${'0'.repeat(32)}`, 'BCK.PROTOCOL.0004'],
    ];
    for (const [path, code] of cases) {
      const x = await w.holder.api.get(path);
      t.is(x.status, 404, path);
      t.is(x.body.code, code);
    }
    // A plan not attached to the agent.
    const lonely = await createPlan(w.owner.api);
    await w.owner.api.post('/protocol/plans/mint', {
      planId: lonely.planId,
      holderAddress: w.holder.walletAddress,
      amount: 1,
    });
    const na = await w.holder.api.get(`/protocol/token/${lonely.planId}/${w.agent.agentId}`);
    t.is(na.status, 404);
    t.is(na.body.code, 'BCK.PROTOCOL.0040');

    // An unlisted agent of another user counts as unknown.
    await w.owner.api.put(`/protocol/agents/${w.agent.agentId}/list/false`);
    const ua = await w.holder.api.get(`/protocol/token/${w.plan.planId}/${w.agent.agentId}`);
    t.is(ua.status, 404);
    t.is(ua.body.code, 'BCK.PROTOCOL.0004');
    await w.owner.api.put(`/protocol/agents/${w.agent.agentId}/list/true`);

    // An unlisted plan of another user is unknown to a non-subscriber, still visible to a subscriber.
    await w.owner.api.put(`/protocol/plans/${w.plan.planId}/list/false`);
    const up = await broke.api.get(`/protocol/token/${w.plan.planId}/${w.agent.agentId}`);
    t.is(up.status, 404);
    t.is(up.body.code, 'BCK.PROTOCOL.0003');
    t.is((await w.holder.api.get(`/protocol/token/${w.plan.planId}/${w.agent.agentId}`)).status, 200);
  });

  test('initialize: exact shape, default maxCredits = minAmount, proof claims, AgentRequest row', async (t) => {
    const w = await world(stack());
    const r = await init(w);
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(Object.keys(r.body).sort(), ['agentRequestId', 'balance', 'maxCredits', 'proof']);
    t.like(r.body, { balance: '10', maxCredits: '2' });
    t.regex(r.body.agentRequestId, /^[0-9a-f-]{36}$/);
    const claims = decodeJwt(r.body.proof);
    t.like(claims, {
      planId: w.plan.planId,
      holder: w.holder.walletAddress,
      agentId: w.agent.agentId,
      agentRequestId: r.body.agentRequestId,
      maxCredits: '2',
      aud: 'payroute:proof',
    });
    t.true(Math.abs((claims.exp ?? 0) - (claims.iat ?? 0) - 3600) <= 1);
    t.is(await burnedOf(w.s, r.body.agentRequestId), '0');
    // Initialize reserves nothing.
    t.is(await balanceOf(w), '10');
    const more = await init(w, { maxCredits: '7' });
    t.is(more.body.maxCredits, '7');
  });

  test('initialize: endpoint matching (verb, :name segments, exact query) -> else 400 BCK.PROTOCOL.0020', async (t) => {
    const w = await world(stack());
    const ok: [string, string][] = [
      ['POST', ASK],
      ['post', 'HTTPS://Agent.Example.com:443/api/v1/ask'],
      ['GET', 'https://agent.example.com/api/v1/tasks/42'],
      ['GET', 'https://agent.example.com/api/v1/tasks/abc-def'],
      ['GET', 'https://agent.example.com/search?q=weather'],
    ];
    for (const [httpVerb, endpoint] of ok) {
      const r = await init(w, { httpVerb, endpoint });
      t.is(r.status, 200, `${httpVerb} ${endpoint}`);
    }
    const bad: [string, string][] = [
      ['GET', ASK],
      ['POST', 'https://agent.example.com/api/v1/ask/'],
      ['POST', 'https://agent.example.com/api/v1/ask?x=1'],
      ['POST', 'http://agent.example.com/api/v1/ask'],
      ['POST', 'https://agent.example.com:8443/api/v1/ask'],
      ['POST', 'https://evil.example.com/api/v1/ask'],
      ['GET', 'https://agent.example.com/api/v1/tasks/'],
      ['GET', 'https://agent.example.com/api/v1/tasks/1/2'],
      ['GET', 'https://agent.example.com/search?q=sun'],
      ['GET', 'https://agent.example.com/search'],
      ['POST', 'not a url'],
    ];
    for (const [httpVerb, endpoint] of bad) {
      const r = await init(w, { httpVerb, endpoint });
      t.is(r.status, 400, `${httpVerb} ${endpoint}`);
      t.is(r.body.code, 'BCK.PROTOCOL.0020');
    }
    const verb = await init(w, { httpVerb: 'FETCH' });
    t.is(verb.status, 400);
    t.is(verb.body.code, 'BCK.HTTP.0400');
    t.is((await init(w, { maxCredits: 0 })).status, 400);
  });

  test('initialize: 404 for another owner, 401 BCK.PROTOCOL.0021 for bad/expired/other-agent tokens, 402 when short', async (t) => {
    const w = await world(stack(), 3);
    const token = await tokenOf(w);
    // Another user cannot initialize on the agent, not even the token's holder.
    for (const u of [w.holder, await w.s.user()]) {
      const r = await u.api.post(`/protocol/agents/initialize/${w.agent.agentId}`, {
        accessToken: token,
        endpoint: ASK,
        httpVerb: 'POST',
      });
      t.is(r.status, 404);
      t.is(r.body.code, 'BCK.PROTOCOL.0004');
    }
    const signer = createTokenSigner(w.s.ctx);
    const claims = { planId: w.plan.planId, agentId: w.agent.agentId, holder: w.holder.walletAddress };
    const expired = await signer.sign(claims, {
      audience: 'payroute:access',
      subject: w.holder.walletAddress,
      ttlSecs: -10,
    });
    const proofAudience = await signer.sign(claims, {
      audience: 'payroute:proof',
      subject: w.holder.walletAddress,
      ttlSecs: 60,
    });
    const flipped = `${token.slice(0, -3)}${token.slice(-3) === 'AAA' ? 'BBB' : 'AAA'}`;
    // A token of the same owner's other agent (the plan is attached to both).
    const other = await createAgent(w.owner.api);
    await attachPlan(w.owner.api, other.agentId, w.plan.planId);
    const otherToken = (await w.holder.api.get(`/protocol/token/${w.plan.planId}/${other.agentId}`)).body.accessToken;
    for (const accessToken of ['garbage', expired, proofAudience, flipped, otherToken]) {
      const r = await w.owner.api.post(`/protocol/agents/initialize/${w.agent.agentId}`, {
        accessToken,
        endpoint: ASK,
        httpVerb: 'POST',
      });
      t.is(r.status, 401, accessToken.slice(0, 20));
      t.is(r.body.code, 'BCK.PROTOCOL.0021');
    }
    // Short: balance 3 < maxCredits 4.
    const short = await init(w, { maxCredits: 4 });
    t.is(short.status, 402);
    t.is(short.body.code, 'BCK.CREDITS.0003');
    // Detaching the plan ends the access its tokens gave.
    await w.owner.api.del(`/protocol/agents/${w.agent.agentId}/plan/${w.plan.planId}`);
    const detached = await w.owner.api.post(`/protocol/agents/initialize/${w.agent.agentId}`, {
      accessToken: token,
      endpoint: ASK,
      httpVerb: 'POST',
    });
    t.is(detached.status, 404);
    t.is(detached.body.code, 'BCK.PROTOCOL.0040');
  });

  test('redeem: burns once (exact shape, ledger row), second redeem 409, over maxCredits 400, bad proofs 400', async (t) => {
    const w = await world(stack());
    const i = await init(w, { maxCredits: 3 });
    const body = { planId: w.plan.planId, holderAddress: w.holder.walletAddress, amount: 4, proof: i.body.proof };
    const over = await w.owner.api.post('/protocol/plans/redeem', body);
    t.is(over.status, 400);
    t.is(over.body.code, 'BCK.PROTOCOL.0025');

    const r = await w.owner.api.post('/protocol/plans/redeem', {
      ...body,
      amount: '3',
      holderAddress: w.holder.walletAddress.toLowerCase(),
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(r.body, { success: true, agentRequestId: i.body.agentRequestId, creditsRedeemed: '3', balance: '7' });
    t.is(await burnedOf(w.s, i.body.agentRequestId), '3');
    const again = await w.owner.api.post('/protocol/plans/redeem', { ...body, amount: 1 });
    t.is(again.status, 409);
    t.is(again.body.code, 'BCK.PROTOCOL.0023');
    t.is(await balanceOf(w), '7');
    t.deepEqual(
      (await ledger(w)).map((l) => [l.kind, l.delta]),
      [
        ['mint', 10n],
        ['redeem', -3n],
      ],
    );
    t.is((await ledger(w)).find((l) => l.kind === 'redeem')?.reference, i.body.agentRequestId);

    // Proof problems: tampered, wrong plan, wrong holder, a token instead of a proof, expired.
    const j = await init(w);
    const signer = createTokenSigner(w.s.ctx);
    const claims = decodeJwt(j.body.proof);
    const expired = await signer.sign(
      {
        planId: claims.planId,
        holder: claims.holder,
        agentId: claims.agentId,
        agentRequestId: claims.agentRequestId,
        maxCredits: claims.maxCredits,
      },
      { audience: 'payroute:proof', ttlSecs: -5 },
    );
    const other = await w.s.user();
    const badOnes: Record<string, unknown>[] = [
      { proof: `${j.body.proof}x` },
      { proof: 'not.a.jwt' },
      { proof: await tokenOf(w) },
      { proof: expired },
      { planId: String(Number(w.plan.planId) + 1000) },
      { holderAddress: other.walletAddress },
    ];
    for (const patch of badOnes) {
      const x = await w.owner.api.post('/protocol/plans/redeem', {
        planId: w.plan.planId,
        holderAddress: w.holder.walletAddress,
        amount: 1,
        proof: j.body.proof,
        ...patch,
      });
      t.is(x.status, 400, JSON.stringify(patch).slice(0, 60));
      t.is(x.body.code, 'BCK.PROTOCOL.0022');
    }
    t.is(await burnedOf(w.s, j.body.agentRequestId), '0');
    t.is(await balanceOf(w), '7');
  });

  test('redeem: only the owner of the proof agent (404), and 402 with nothing burnt when credits are short', async (t) => {
    const w = await world(stack(), 5);
    const a = await init(w, { maxCredits: 4 });
    const b = await init(w, { maxCredits: 4 });
    const redeem = (proof: string, amount: number, who = w.owner) =>
      who.api.post('/protocol/plans/redeem', {
        planId: w.plan.planId,
        holderAddress: w.holder.walletAddress,
        amount,
        proof,
      });
    // Neither the holder nor a stranger may redeem the agent owner's proof.
    for (const u of [w.holder, await w.s.user()]) {
      const x = await redeem(a.body.proof, 1, u);
      t.is(x.status, 404);
      t.is(x.body.code, 'BCK.PROTOCOL.0004');
    }
    t.is((await redeem(a.body.proof, 4)).status, 200);
    const short = await redeem(b.body.proof, 2);
    t.is(short.status, 402);
    t.is(short.body.code, 'BCK.CREDITS.0003');
    t.is(await burnedOf(w.s, b.body.agentRequestId), '0');
    const burns: Record<string, any>[] = await w.s.ctx.db
      .em()
      .execute('select count(*) as n from credit_burn where agent_request_id = ?', [b.body.agentRequestId]);
    t.is(Number(burns[0]?.n), 0);
    t.is(await balanceOf(w), '1');
    // The refused redeem left the request usable: a smaller amount goes through.
    const one = await redeem(b.body.proof, 1);
    t.is(one.status, 200);
    t.is(one.body.balance, '0');
    t.is(
      (await ledger(w)).reduce((s, l) => s + l.delta, 0n),
      0n,
    );
  });

  test('unlisted plan: order refused with 403 BCK.PROTOCOL.0062, an existing subscriber keeps spending', async (t) => {
    const w = await world(stack(), 6);
    const before = await init(w, { maxCredits: 2 });
    await w.owner.api.put(`/protocol/plans/${w.plan.planId}/list/false`);
    const order = await w.holder.api.post(`/protocol/plans/${w.plan.planId}/order`);
    t.is(order.status, 403);
    t.is(order.body.code, 'BCK.PROTOCOL.0062');
    // A proof from before unlisting still redeems.
    const r1 = await w.owner.api.post('/protocol/plans/redeem', {
      planId: w.plan.planId,
      holderAddress: w.holder.walletAddress,
      amount: 2,
      proof: before.body.proof,
    });
    t.is(r1.status, 200);
    t.is(r1.body.balance, '4');
    // And a new token/initialize/redeem cycle works after unlisting.
    const after = await init(w, { maxCredits: 3 });
    t.is(after.status, 200);
    const r2 = await w.owner.api.post('/protocol/plans/redeem', {
      planId: w.plan.planId,
      holderAddress: w.holder.walletAddress,
      amount: 3,
      proof: after.body.proof,
    });
    t.is(r2.status, 200);
    t.is(r2.body.balance, '1');
    const sub = await w.owner.api.post('/protocol/agent-sub-tasks', {
      agentRequestId: after.body.agentRequestId,
      creditsToRedeem: 1,
    });
    t.is(sub.status, 400, 'maxCredits already used by the redeem');
    t.is(sub.body.code, 'BCK.PROTOCOL.0025');
  });

  test('sub-tasks: each (request, tag) burns once, duplicates answer the first result, total <= maxCredits', async (t) => {
    const w = await world(stack());
    const i = await init(w, { maxCredits: 5 });
    const id = i.body.agentRequestId;
    const sub = (body: Record<string, unknown>, who = w.owner) =>
      who.api.post('/protocol/agent-sub-tasks', { agentRequestId: id, ...body });

    const a = await sub({ creditsToRedeem: 2, tag: 'search', description: 'searched the web', status: 'Success' });
    t.is(a.status, 200, JSON.stringify(a.body));
    t.deepEqual(a.body, { success: true, agentRequestId: id, creditsRedeemed: '2', balance: '8' });
    const dup = await sub({ creditsToRedeem: 3, tag: 'search' });
    t.is(dup.status, 200);
    t.deepEqual(dup.body, { success: true, agentRequestId: id, creditsRedeemed: '2', balance: '8', duplicate: true });
    const untagged = await sub({ creditsToRedeem: '1' });
    t.deepEqual(untagged.body, { success: true, agentRequestId: id, creditsRedeemed: '1', balance: '7' });
    const dflt = await sub({ creditsToRedeem: 1, tag: 'default' });
    t.is(dflt.body.duplicate, true, "no tag and tag 'default' are the same sub-task");
    const over = await sub({ creditsToRedeem: 3, tag: 'summarise' });
    t.is(over.status, 400);
    t.is(over.body.code, 'BCK.PROTOCOL.0025');
    // The refused burn left its tag free: retried within the limit, it burns.
    const retry = await sub({ creditsToRedeem: 2, tag: 'summarise' });
    t.is(retry.status, 200);
    t.is(retry.body.balance, '5');
    t.is(await burnedOf(w.s, id), '5');
    // The redeem shares the same limit.
    const red = await w.owner.api.post('/protocol/plans/redeem', {
      planId: w.plan.planId,
      holderAddress: w.holder.walletAddress,
      amount: 1,
      proof: i.body.proof,
    });
    t.is(red.status, 400);
    t.is(red.body.code, 'BCK.PROTOCOL.0025');

    const rows: Record<string, any>[] = await w.s.ctx.db
      .em()
      .execute(
        'select burn_key, tag, description, status, cast(amount as text) as amount from credit_burn where agent_request_id = ? order by burn_key',
        [id],
      );
    t.deepEqual(
      rows.map((r) => [r.burn_key, r.tag, r.description, r.status, r.amount]),
      [
        ['subtask:default', 'default', null, null, '1'],
        ['subtask:search', 'search', 'searched the web', 'Success', '2'],
        ['subtask:summarise', 'summarise', null, null, '2'],
      ],
    );
    const l = await ledger(w);
    t.deepEqual(
      l
        .filter((x) => x.kind === 'subtask')
        .map((x) => x.delta)
        .sort(),
      [-1n, -2n, -2n],
    );
    t.is(
      l.reduce((s, x) => s + x.delta, 0n),
      5n,
    );
    t.is(await balanceOf(w), '5');

    // Unknown request, another owner's request: the same 404.
    const unknown = await w.owner.api.post('/protocol/agent-sub-tasks', {
      agentRequestId: '00000000-0000-4000-8000-000000000000',
      creditsToRedeem: 1,
    });
    t.is(unknown.status, 404);
    t.is(unknown.body.code, 'BCK.PROTOCOL.0024');
    const foreign = await sub({ creditsToRedeem: 1, tag: 'x' }, w.holder);
    t.is(foreign.status, 404);
    t.is(foreign.body.code, 'BCK.PROTOCOL.0024');
    for (const body of [
      {},
      { agentRequestId: id },
      { agentRequestId: id, creditsToRedeem: 0 },
      { agentRequestId: id, creditsToRedeem: 1, tag: '' },
    ]) {
      const x = await w.owner.api.post('/protocol/agent-sub-tasks', body);
      t.is(x.status, 400, JSON.stringify(body));
    }
  });

  test('sub-task short of credits: 402, nothing burnt, tag stays free', async (t) => {
    const w = await world(stack(), 2);
    const i = await init(w, { maxCredits: 2 });
    const j = await init(w, { maxCredits: 2 });
    t.is(
      (
        await w.owner.api.post('/protocol/agent-sub-tasks', {
          agentRequestId: j.body.agentRequestId,
          creditsToRedeem: 2,
        })
      ).status,
      200,
    );
    const x = await w.owner.api.post('/protocol/agent-sub-tasks', {
      agentRequestId: i.body.agentRequestId,
      creditsToRedeem: 1,
      tag: 't',
    });
    t.is(x.status, 402);
    t.is(x.body.code, 'BCK.CREDITS.0003');
    t.is(await burnedOf(w.s, i.body.agentRequestId), '0');
    await w.owner.api.post('/protocol/plans/mint', {
      planId: w.plan.planId,
      holderAddress: w.holder.walletAddress,
      amount: 1,
    });
    const y = await w.owner.api.post('/protocol/agent-sub-tasks', {
      agentRequestId: i.body.agentRequestId,
      creditsToRedeem: 1,
      tag: 't',
    });
    t.is(y.status, 200);
    t.is(y.body.duplicate, undefined);
    t.is(y.body.balance, '0');
  });
});
