import type { ExecutionContext } from 'ava';
import type { ApiResponse } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { agentBody, attachPlan, createAgent, createPlan, planBody } from '../support/registry-builders.js';

const AGENT_KEYS = [
  'agentDefinitionUrl',
  'agentId',
  'createdAt',
  'description',
  'endpoints',
  'isOwner',
  'listed',
  'name',
  'tags',
  'updatedAt',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function is400(t: ExecutionContext, r: ApiResponse<any>, label: string): void {
  t.is(r.status, 400, `${label}: ${r.text}`);
  t.is(r.body.code, 'BCK.HTTP.0400', label);
}

function is404(t: ExecutionContext, r: ApiResponse<any>, code: string, label: string): void {
  t.is(r.status, 404, `${label}: ${r.text}`);
  t.is(r.body.code, code, label);
}

const ep = (url: string) => [{ GET: url }];

forEachDb(({ stack, test }) => {
  test('POST /protocol/agents returns the agent record with exact fields; 401 without a key', async (t) => {
    const { api } = await stack().user();
    const body = agentBody({ name: '  Trimmed name  ', tags: ['a', 'b'] });
    const r = await api.post('/protocol/agents', body);
    t.is(r.status, 200, r.text);
    t.deepEqual(Object.keys(r.body).sort(), AGENT_KEYS);
    t.regex(r.body.agentId, /^did:payroute:sandbox:[0-9a-f]{32}$/);
    t.is(r.body.name, 'Trimmed name');
    t.is(r.body.description, body.description);
    t.deepEqual(r.body.tags, ['a', 'b']);
    t.deepEqual(r.body.endpoints, body.endpoints);
    t.is(r.body.agentDefinitionUrl, body.agentDefinitionUrl);
    t.true(r.body.listed);
    t.true(r.body.isOwner);
    t.regex(r.body.createdAt, ISO);
    t.is(r.body.createdAt, r.body.updatedAt);
    // Round trip: the stored agent reads back identically (plus its plans).
    const g = await api.get(`/protocol/agents/${r.body.agentId}`);
    t.is(g.status, 200);
    t.deepEqual(g.body, { ...r.body, plans: [] });

    const anon = await fetch(`${stack().baseUrl}/protocol/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    t.is(anon.status, 401);
  });

  test('POST /protocol/agents refuses malformed input with 400, never 500', async (t) => {
    const { api } = await stack().user();
    const cases: [string, unknown][] = [
      ['array body', [agentBody()]],
      ['null body', null],
      ['string body', 'agent'],
      ['missing name', agentBody({ name: undefined })],
      ['name not a string', agentBody({ name: 42 })],
      ['blank name', agentBody({ name: '   ' })],
      ['name too long', agentBody({ name: 'n'.repeat(201) })],
      ['description too long', agentBody({ description: 'd'.repeat(5001) })],
      ['tags not an array', agentBody({ tags: 'weather' })],
      ['tag not a string', agentBody({ tags: [1] })],
      ['tag too long', agentBody({ tags: ['t'.repeat(101)] })],
      ['too many tags', agentBody({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) })],
      ['endpoints not an array', agentBody({ endpoints: { GET: 'https://a.example/x' } })],
      ['no endpoints', agentBody({ endpoints: [] })],
      ['endpoint is a string', agentBody({ endpoints: ['https://a.example/x'] })],
      ['empty endpoint object', agentBody({ endpoints: [{}] })],
      ['unknown verb', agentBody({ endpoints: [{ FETCH: 'https://a.example/x' }] })],
      ['lower-case verb', agentBody({ endpoints: [{ get: 'https://a.example/x' }] })],
      ['__proto__ verb', { ...agentBody(), endpoints: [JSON.parse('{"__proto__":"https://a.example/x"}')] }],
      ['ftp endpoint', agentBody({ endpoints: ep('ftp://a.example/x') })],
      ['relative endpoint', agentBody({ endpoints: ep('/api/x') })],
      ['endpoint with credentials', agentBody({ endpoints: ep('https://u:p@a.example/x') })],
      ['endpoint with a space', agentBody({ endpoints: ep('https://a.example/a b') })],
      ['endpoint with a leading space', agentBody({ endpoints: ep(' https://a.example/x') })],
      ['endpoint URL not a string', agentBody({ endpoints: [{ GET: 5 }] })],
      ['endpoint URL too long', agentBody({ endpoints: ep(`https://a.example/${'x'.repeat(2048)}`) })],
      [
        'too many endpoints',
        agentBody({ endpoints: Array.from({ length: 51 }, (_, i) => ({ GET: `https://a.example/${i}` })) }),
      ],
      ['missing agentDefinitionUrl', agentBody({ agentDefinitionUrl: undefined })],
      ['javascript: definition URL', agentBody({ agentDefinitionUrl: 'javascript:alert(1)' })],
      ['definition URL not a URL', agentBody({ agentDefinitionUrl: 'not a url' })],
    ];
    for (const [label, body] of cases) is400(t, await api.post('/protocol/agents', body), label);
    const list = await api.get('/protocol/agents');
    t.is(list.body.total, 0, 'nothing was created');
  });

  test("GET /protocol/agents lists only the caller's agents, paged and sorted", async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const names = ['charlie', 'alpha', 'delta', 'bravo', 'echo'];
    const created = [];
    for (const name of names) created.push(await createAgent(a.api, { name }));
    await createAgent(b.api, { name: 'not-mine' });

    const def = await a.api.get('/protocol/agents');
    t.is(def.status, 200);
    t.deepEqual(Object.keys(def.body).sort(), ['agents', 'offset', 'page', 'total']);
    t.like(def.body, { total: 5, page: 1, offset: 10 });
    // Default: newest first.
    t.deepEqual(
      def.body.agents.map((x: any) => x.agentId),
      created.map((c) => c.agentId).reverse(),
    );
    for (const x of def.body.agents) t.deepEqual(Object.keys(x).sort(), AGENT_KEYS);

    const asc = await a.api.get('/protocol/agents?sortOrder=asc&offset=2&page=2');
    t.like(asc.body, { total: 5, page: 2, offset: 2 });
    t.deepEqual(
      asc.body.agents.map((x: any) => x.name),
      ['delta', 'bravo'],
    );

    const byName = await a.api.get('/protocol/agents?sortBy=name&sortOrder=asc');
    t.deepEqual(
      byName.body.agents.map((x: any) => x.name),
      [...names].sort(),
    );
    const byNameDesc = await a.api.get('/protocol/agents?sortBy=name&offset=2&page=3');
    t.deepEqual(
      byNameDesc.body.agents.map((x: any) => x.name),
      ['alpha'],
    );
    const past = await a.api.get('/protocol/agents?page=9');
    t.like(past.body, { total: 5, page: 9, agents: [] });

    const other = await b.api.get('/protocol/agents');
    t.is(other.body.total, 1);
    t.is(other.body.agents[0].name, 'not-mine');

    for (const q of [
      'page=0',
      'page=-1',
      'page=x',
      'offset=0',
      'offset=101',
      'offset=1.5',
      'sortBy=ownerId',
      'sortOrder=up',
    ]) {
      is400(t, await a.api.get(`/protocol/agents?${q}`), q);
    }
  });

  test("GET /protocol/agents/{agentId}: listed or own; another user's unlisted agent is 404", async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const agent = await createAgent(a.api);
    const listedPlan = await createPlan(a.api, { name: 'listed' });
    const hiddenPlan = await createPlan(a.api, { name: 'hidden' });
    await attachPlan(a.api, agent.agentId, listedPlan.planId);
    await attachPlan(a.api, agent.agentId, hiddenPlan.planId);
    t.is((await a.api.put(`/protocol/plans/${hiddenPlan.planId}/list/false`)).status, 200);

    const own = await a.api.get(`/protocol/agents/${agent.agentId}`);
    t.is(own.status, 200);
    t.deepEqual(
      own.body.plans.map((p: any) => p.planId),
      [listedPlan.planId, hiddenPlan.planId],
    );
    t.true(own.body.plans[0].isOwner);

    const seen = await b.api.get(`/protocol/agents/${agent.agentId}`);
    t.is(seen.status, 200);
    t.false(seen.body.isOwner);
    t.deepEqual(
      seen.body.plans.map((p: any) => p.planId),
      [listedPlan.planId],
      'only listed plans for others',
    );
    t.false(seen.body.plans[0].isOwner);
    // Encoded colons name the same agent.
    t.is((await b.api.get(`/protocol/agents/${encodeURIComponent(agent.agentId)}`)).status, 200);

    t.is((await a.api.put(`/protocol/agents/${agent.agentId}/list/false`)).status, 200);
    is404(t, await b.api.get(`/protocol/agents/${agent.agentId}`), 'BCK.PROTOCOL.0004', 'unlisted, not owner');
    const stillOwn = await a.api.get(`/protocol/agents/${agent.agentId}`);
    t.is(stillOwn.status, 200);
    t.false(stillOwn.body.listed);

    for (const id of [
      'did:payroute:sandbox:00000000000000000000000000000000',
      'nope',
      `did:${'x'.repeat(300)}`,
      '%00',
      "' or 1=1 --",
    ]) {
      is404(t, await a.api.get(`/protocol/agents/${encodeURIComponent(id)}`), 'BCK.PROTOCOL.0004', id.slice(0, 40));
    }
  });

  test('PUT /protocol/agents/{agentId} updates any subset; owner only; bad input 400', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const agent = await createAgent(a.api);
    const path = `/protocol/agents/${agent.agentId}`;

    const r = await a.api.put(path, { name: 'Renamed', tags: [] });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { success: true });
    const after = (await a.api.get(path)).body;
    t.is(after.name, 'Renamed');
    t.deepEqual(after.tags, []);
    t.is(after.description, agent.description, 'untouched fields stay');
    t.deepEqual(after.endpoints, agent.endpoints);
    t.is(after.createdAt, agent.createdAt);
    t.true(after.updatedAt >= agent.updatedAt);

    const endpoints = [
      { PUT: 'http://agent.example.com:8080/v2/items/:id', DELETE: 'http://agent.example.com:8080/v2/items/:id' },
    ];
    t.is((await a.api.put(path, { endpoints, agentDefinitionUrl: 'https://x.example/def.json' })).status, 200);
    const again = (await a.api.get(path)).body;
    t.deepEqual(again.endpoints, endpoints);
    t.is(again.agentDefinitionUrl, 'https://x.example/def.json');

    const bad: [string, unknown][] = [
      ['empty body', {}],
      ['unknown key', { name: 'x', owner: 'me' }],
      ['only unknown key', { listed: false }],
      ['wrong type', { tags: 'a,b' }],
      ['bad URL', { agentDefinitionUrl: 'file:///etc/passwd' }],
      ['blank name', { name: '' }],
      ['array body', []],
    ];
    for (const [label, body] of bad) is400(t, await a.api.put(path, body), label);

    is404(t, await b.api.put(path, { name: 'hijack' }), 'BCK.PROTOCOL.0004', 'not owner');
    is404(
      t,
      await a.api.put('/protocol/agents/did:payroute:sandbox:ffffffffffffffffffffffffffffffff', { name: 'x' }),
      'BCK.PROTOCOL.0004',
      'unknown',
    );
    t.is((await a.api.get(path)).body.name, 'Renamed', 'not changed by the refused calls');
  });

  test('PUT /protocol/agents/{agentId}/list/{activate}: owner only; activate must be true or false', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const agent = await createAgent(a.api);
    const path = (v: string) => `/protocol/agents/${agent.agentId}/list/${v}`;
    t.deepEqual((await a.api.put(path('false'))).body, { success: true });
    t.false((await a.api.get(`/protocol/agents/${agent.agentId}`)).body.listed);
    t.deepEqual((await a.api.put(path('false'))).body, { success: true }, 'idempotent');
    t.deepEqual((await a.api.put(path('true'))).body, { success: true });
    t.true((await b.api.get(`/protocol/agents/${agent.agentId}`)).body.listed);
    for (const v of ['yes', '1', 'TRUE', 'null']) is400(t, await a.api.put(path(v)), v);
    is404(t, await b.api.put(path('false')), 'BCK.PROTOCOL.0004', 'not owner');
    t.true((await b.api.get(`/protocol/agents/${agent.agentId}`)).body.listed);
    is404(t, await a.api.put('/protocol/agents/unknown/list/true'), 'BCK.PROTOCOL.0004', 'unknown');
  });

  test('attach and detach plans: owner of both only, idempotent attach, 404s', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const agent = await createAgent(a.api);
    const plan = await createPlan(a.api);
    const plan2 = await createPlan(a.api, { name: 'second' });
    const bPlan = await createPlan(b.api);
    const bAgent = await createAgent(b.api);
    const link = (agentId: string, planId: string) => `/protocol/agents/${agentId}/plan/${planId}`;

    t.deepEqual((await a.api.post(link(agent.agentId, plan.planId))).body, { success: true });
    t.deepEqual(
      (await a.api.post(link(agent.agentId, plan.planId))).body,
      { success: true },
      'attaching twice is fine',
    );
    await attachPlan(a.api, agent.agentId, plan2.planId);
    t.deepEqual(
      (await a.api.get(`/protocol/agents/${agent.agentId}`)).body.plans.map((p: any) => p.planId),
      [plan.planId, plan2.planId],
    );

    is404(t, await a.api.post(link(agent.agentId, bPlan.planId)), 'BCK.PROTOCOL.0003', "someone else's plan");
    is404(t, await b.api.post(link(agent.agentId, bPlan.planId)), 'BCK.PROTOCOL.0004', "someone else's agent");
    is404(t, await a.api.post(link(bAgent.agentId, plan.planId)), 'BCK.PROTOCOL.0004', 'agent of another user');
    for (const planId of ['999999', '0', 'abc', '1.5', '-1', '99999999999999999999', '2147483648']) {
      is404(t, await a.api.post(link(agent.agentId, planId)), 'BCK.PROTOCOL.0003', `planId ${planId}`);
    }
    is404(
      t,
      await a.api.post(link('did:payroute:sandbox:00000000000000000000000000000000', plan.planId)),
      'BCK.PROTOCOL.0004',
      'unknown agent',
    );

    is404(t, await b.api.del(link(agent.agentId, plan.planId)), 'BCK.PROTOCOL.0004', 'detach by another user');
    t.deepEqual((await a.api.del(link(agent.agentId, plan.planId))).body, { success: true });
    is404(t, await a.api.del(link(agent.agentId, plan.planId)), 'BCK.PROTOCOL.0040', 'not attached any more');
    is404(t, await a.api.del(link(agent.agentId, bPlan.planId)), 'BCK.PROTOCOL.0003', "detach someone else's plan");
    t.deepEqual(
      (await a.api.get(`/protocol/agents/${agent.agentId}`)).body.plans.map((p: any) => p.planId),
      [plan2.planId],
    );
  });

  test('concurrent attaches of the same pair all succeed and leave one link', async (t) => {
    const a = await stack().user();
    const agent = await createAgent(a.api);
    const plan = await createPlan(a.api);
    const rs = await Promise.all(
      Array.from({ length: 8 }, () => a.api.post(`/protocol/agents/${agent.agentId}/plan/${plan.planId}`)),
    );
    t.deepEqual(
      rs.map((r) => r.status),
      Array(8).fill(200),
    );
    t.is((await a.api.get(`/protocol/agents/${agent.agentId}/plans`)).body.total, 1);
  });

  test('GET /protocol/agents/{agentId}/plans pages the attached plans; others see listed ones only', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const agent = await createAgent(a.api);
    const plans = [];
    for (let i = 0; i < 3; i += 1) {
      const p = await createPlan(a.api, { name: `p${i}` });
      await attachPlan(a.api, agent.agentId, p.planId);
      plans.push(p);
    }
    await createPlan(a.api, { name: 'not attached' });
    const [p0, p1, p2] = plans.map((p) => p.planId);
    const path = `/protocol/agents/${agent.agentId}/plans`;

    const all = await a.api.get(path);
    t.is(all.status, 200);
    t.deepEqual(Object.keys(all.body).sort(), ['offset', 'page', 'plans', 'total']);
    t.like(all.body, { total: 3, page: 1, offset: 10 });
    t.deepEqual(
      all.body.plans.map((p: any) => p.planId),
      [p2, p1, p0],
    );
    const second = await a.api.get(`${path}?page=2&offset=2`);
    t.like(second.body, { total: 3, page: 2, offset: 2 });
    t.deepEqual(
      second.body.plans.map((p: any) => p.planId),
      [p0],
    );

    await a.api.put(`/protocol/plans/${p1}/list/false`);
    const others = await b.api.get(path);
    t.is(others.body.total, 2);
    t.deepEqual(
      others.body.plans.map((p: any) => p.planId),
      [p2, p0],
    );
    t.is((await a.api.get(path)).body.total, 3, 'the owner still sees the unlisted plan');

    is400(t, await a.api.get(`${path}?offset=1000`), 'offset too large');
    await a.api.put(`/protocol/agents/${agent.agentId}/list/false`);
    is404(t, await b.api.get(path), 'BCK.PROTOCOL.0004', 'unlisted agent');
    is404(t, await a.api.get('/protocol/agents/nope/plans'), 'BCK.PROTOCOL.0004', 'unknown agent');
  });

  test('POST /protocol/agents/plans creates an agent and a plan, attached, in one step', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const agent = agentBody();
    const plan = planBody();
    const body = {
      agentMetadata: { name: agent.name, description: agent.description, tags: agent.tags },
      agentApi: { endpoints: agent.endpoints, agentDefinitionUrl: agent.agentDefinitionUrl },
      planMetadata: { name: plan.name, description: plan.description },
      priceConfig: plan.priceConfig,
      creditsConfig: plan.creditsConfig,
      accessLimit: 'credits',
    };
    const r = await a.api.post('/protocol/agents/plans', body);
    t.is(r.status, 200, r.text);
    t.deepEqual(Object.keys(r.body).sort(), ['agent', 'agentId', 'plan', 'planId']);
    t.is(r.body.agent.agentId, r.body.agentId);
    t.is(r.body.plan.planId, r.body.planId);
    t.regex(r.body.planId, /^[1-9][0-9]*$/);
    t.deepEqual(Object.keys(r.body.agent).sort(), AGENT_KEYS);
    t.like(r.body.plan, { name: plan.name, accessLimit: 'credits', listed: true, isOwner: true });

    const got = await b.api.get(`/protocol/agents/${r.body.agentId}`);
    t.is(got.status, 200);
    t.deepEqual(
      got.body.plans.map((p: any) => p.planId),
      [r.body.planId],
    );
    t.deepEqual((await a.api.get(`/protocol/plans/${r.body.planId}`)).body, r.body.plan);
    const withoutLimit = await a.api.post('/protocol/agents/plans', { ...body, accessLimit: undefined });
    t.is(withoutLimit.body.plan?.accessLimit, 'credits', 'accessLimit defaults to credits');

    const bad: [string, unknown][] = [
      ['missing agentApi', { ...body, agentApi: undefined }],
      ['bad endpoints', { ...body, agentApi: { ...body.agentApi, endpoints: [{ GET: 'nope' }] } }],
      ['bad price', { ...body, priceConfig: { ...(plan.priceConfig as object), amounts: ['-1'] } }],
      ['bad credits', { ...body, creditsConfig: { creditsType: 'FIXED', amount: '0', minAmount: '0' } }],
      ['bad accessLimit', { ...body, accessLimit: 'time' }],
      ['planMetadata not an object', { ...body, planMetadata: 'x' }],
    ];
    const before = (await a.api.get('/protocol/agents')).body.total;
    const plansBefore = (await a.api.get('/protocol/plans')).body.total;
    for (const [label, b2] of bad) is400(t, await a.api.post('/protocol/agents/plans', b2), label);
    t.is((await a.api.get('/protocol/agents')).body.total, before, 'no agent left behind');
    t.is((await a.api.get('/protocol/plans')).body.total, plansBefore, 'no plan left behind');
  });
});
