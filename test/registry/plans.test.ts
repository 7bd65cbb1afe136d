import type { ExecutionContext } from 'ava';
import type { ApiResponse } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import {
  TOKEN_ADDRESS,
  attachPlan,
  createAgent,
  createPlan,
  planBody,
  testAddress,
} from '../support/registry-builders.js';

const PLAN_KEYS = [
  'accessLimit',
  'createdAt',
  'creditsConfig',
  'description',
  'isOwner',
  'listed',
  'name',
  'planId',
  'priceConfig',
  'updatedAt',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MAX_INT64 = '9223372036854775807';

function is400(t: ExecutionContext, r: ApiResponse<any>, label: string): void {
  t.is(r.status, 400, `${label}: ${r.text}`);
  t.is(r.body.code, 'BCK.HTTP.0400', label);
}

function is404(t: ExecutionContext, r: ApiResponse<any>, code: string, label: string): void {
  t.is(r.status, 404, `${label}: ${r.text}`);
  t.is(r.body.code, code, label);
}

const price = (over: Record<string, unknown>) => ({ ...(planBody().priceConfig as object), ...over });
const credits = (over: Record<string, unknown>) => ({ ...(planBody().creditsConfig as object), ...over });

forEachDb(({ stack, test }) => {
  test('POST /protocol/plans returns the plan record: string amounts, checksummed addresses; 401 without a key', async (t) => {
    const { api } = await stack().user();
    const receivers = [testAddress(1), '0x209693bc6afc0c5328ba36faf03c514ef312287c'];
    const r = await api.post(
      '/protocol/plans',
      planBody({
        name: 'Pro',
        priceConfig: {
          priceType: 'FIXED_PRICE',
          tokenAddress: TOKEN_ADDRESS.toLowerCase(),
          amounts: [1500000, '9223372036000000000'],
          receivers,
        },
        creditsConfig: { creditsType: 'FIXED', amount: 100, minAmount: '5' },
        accessLimit: undefined,
      }),
    );
    t.is(r.status, 200, r.text);
    t.deepEqual(Object.keys(r.body).sort(), PLAN_KEYS);
    t.regex(r.body.planId, /^[1-9][0-9]*$/);
    t.deepEqual(r.body.priceConfig, {
      priceType: 'FIXED_PRICE',
      tokenAddress: TOKEN_ADDRESS,
      amounts: ['1500000', '9223372036000000000'],
      receivers: ['0x0000000000000000000000000000000000000001', '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'],
    });
    t.deepEqual(r.body.creditsConfig, { creditsType: 'FIXED', amount: '100', minAmount: '5' });
    t.like(r.body, { name: 'Pro', accessLimit: 'credits', listed: true, isOwner: true });
    t.regex(r.body.createdAt, ISO);
    t.is(r.body.createdAt, r.body.updatedAt);
    const g = await api.get(`/protocol/plans/${r.body.planId}`);
    t.deepEqual(g.body, r.body, 'reads back identically');

    const huge = await api.post(
      '/protocol/plans',
      planBody({ creditsConfig: { creditsType: 'FIXED', amount: MAX_INT64, minAmount: MAX_INT64 } }),
    );
    t.is(huge.status, 200, 'the largest 64-bit amount is stored exactly');
    const exact = { creditsType: 'FIXED', amount: MAX_INT64, minAmount: MAX_INT64 };
    t.deepEqual((await api.get(`/protocol/plans/${huge.body.planId}`)).body.creditsConfig, exact);
    // Also through the list and the agent views (SQLite hands BIGINTs above 2^53 back rounded unless re-read).
    const listed = (await api.get('/protocol/plans')).body.plans.find((p: any) => p.planId === huge.body.planId);
    t.deepEqual(listed.creditsConfig, exact);
    const agent = await createAgent(api);
    await attachPlan(api, agent.agentId, huge.body.planId);
    t.deepEqual((await api.get(`/protocol/agents/${agent.agentId}`)).body.plans[0].creditsConfig, exact);
    t.deepEqual((await api.get(`/protocol/agents/${agent.agentId}/plans`)).body.plans[0].creditsConfig, exact);

    const anon = await fetch(`${stack().baseUrl}/protocol/plans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    t.is(anon.status, 401);
  });

  test('POST /protocol/plans refuses malformed input with 400, never 500', async (t) => {
    const { api } = await stack().user();
    const cases: [string, unknown][] = [
      ['null body', null],
      ['array body', [planBody()]],
      ['missing name', planBody({ name: undefined })],
      ['name too long', planBody({ name: 'x'.repeat(201) })],
      ['description not a string', planBody({ description: ['x'] })],
      ['missing priceConfig', planBody({ priceConfig: undefined })],
      ['priceConfig not an object', planBody({ priceConfig: 'FIXED_PRICE' })],
      ['other priceType', planBody({ priceConfig: price({ priceType: 'DYNAMIC' }) })],
      ['bad token address', planBody({ priceConfig: price({ tokenAddress: '0x1234' }) })],
      ['token address without 0x', planBody({ priceConfig: price({ tokenAddress: TOKEN_ADDRESS.slice(2) }) })],
      [
        'bad checksum',
        planBody({ priceConfig: price({ tokenAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7E' }) }),
      ],
      ['negative amount', planBody({ priceConfig: price({ amounts: [-1] }) })],
      ['negative amount string', planBody({ priceConfig: price({ amounts: ['-1'] }) })],
      ['amount over 64 bits', planBody({ priceConfig: price({ amounts: ['99999999999999999999'] }) })],
      ['amount just over int64', planBody({ priceConfig: price({ amounts: ['9223372036854775808'] }) })],
      ['fractional amount', planBody({ priceConfig: price({ amounts: [1.5] }) })],
      ['decimal point string', planBody({ priceConfig: price({ amounts: ['1.0'] }) })],
      ['unsafe integer', planBody({ priceConfig: price({ amounts: [2 ** 53] }) })],
      ['exponent string', planBody({ priceConfig: price({ amounts: ['1e6'] }) })],
      ['leading zero', planBody({ priceConfig: price({ amounts: ['01'] }) })],
      ['hex string', planBody({ priceConfig: price({ amounts: ['0x10'] }) })],
      ['amount is null', planBody({ priceConfig: price({ amounts: [null] }) })],
      ['amount is boolean', planBody({ priceConfig: price({ amounts: [true] }) })],
      [
        'total over 64 bits',
        planBody({ priceConfig: price({ amounts: [MAX_INT64, '1'], receivers: [testAddress(1), testAddress(2)] }) }),
      ],
      [
        'more receivers than amounts',
        planBody({ priceConfig: price({ amounts: ['1'], receivers: [testAddress(1), testAddress(2)] }) }),
      ],
      [
        'more amounts than receivers',
        planBody({ priceConfig: price({ amounts: ['1', '2'], receivers: [testAddress(1)] }) }),
      ],
      ['no receivers', planBody({ priceConfig: price({ amounts: [], receivers: [] }) })],
      [
        '11 receivers',
        planBody({
          priceConfig: price({
            amounts: Array(11).fill('1'),
            receivers: Array.from({ length: 11 }, (_, i) => testAddress(i + 1)),
          }),
        }),
      ],
      ['bad receiver', planBody({ priceConfig: price({ receivers: ['alice.eth'] }) })],
      ['receivers not an array', planBody({ priceConfig: price({ receivers: testAddress(1) }) })],
      ['missing creditsConfig', planBody({ creditsConfig: undefined })],
      ['other creditsType', planBody({ creditsConfig: credits({ creditsType: 'DYNAMIC' }) })],
      ['zero credits', planBody({ creditsConfig: credits({ amount: 0 }) })],
      ['zero minAmount', planBody({ creditsConfig: credits({ minAmount: '0' }) })],
      ['negative credits', planBody({ creditsConfig: credits({ amount: -10 }) })],
      ['minAmount over amount', planBody({ creditsConfig: credits({ amount: '5', minAmount: '6' }) })],
      ['huge credits', planBody({ creditsConfig: credits({ amount: '99999999999999999999' }) })],
      ['credits as float', planBody({ creditsConfig: credits({ amount: 10.5 }) })],
      ['other accessLimit', planBody({ accessLimit: 'time' })],
    ];
    for (const [label, body] of cases) is400(t, await api.post('/protocol/plans', body), label);
    t.is((await api.get('/protocol/plans')).body.total, 0, 'nothing was created');
  });

  test("GET /protocol/plans lists only the caller's plans, paged and sorted", async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const names = ['gamma', 'alpha', 'beta'];
    const ids: string[] = [];
    for (const name of names) ids.push((await createPlan(a.api, { name })).planId);
    await createPlan(b.api, { name: 'theirs' });

    const def = await a.api.get('/protocol/plans');
    t.is(def.status, 200);
    t.deepEqual(Object.keys(def.body).sort(), ['offset', 'page', 'plans', 'total']);
    t.like(def.body, { total: 3, page: 1, offset: 10 });
    t.deepEqual(
      def.body.plans.map((p: any) => p.planId),
      [...ids].reverse(),
    );
    for (const p of def.body.plans) t.deepEqual(Object.keys(p).sort(), PLAN_KEYS);

    const page2 = await a.api.get('/protocol/plans?page=2&offset=2&sortOrder=asc');
    t.like(page2.body, { total: 3, page: 2, offset: 2 });
    t.deepEqual(
      page2.body.plans.map((p: any) => p.planId),
      [ids[2]],
    );
    const byName = await a.api.get('/protocol/plans?sortBy=name&sortOrder=asc');
    t.deepEqual(
      byName.body.plans.map((p: any) => p.name),
      ['alpha', 'beta', 'gamma'],
    );

    // Updating a plan moves it to the front when sorted by updatedAt.
    await a.api.put(`/protocol/plans/${ids[0]}`, { description: 'touched' });
    const byUpdated = await a.api.get('/protocol/plans?sortBy=updatedAt&offset=1');
    t.deepEqual(
      byUpdated.body.plans.map((p: any) => p.planId),
      [ids[0]],
    );

    t.is((await b.api.get('/protocol/plans')).body.total, 1);
    for (const q of ['page=0', 'offset=0', 'offset=500', 'sortBy=price', 'sortOrder=random']) {
      is400(t, await a.api.get(`/protocol/plans?${q}`), q);
    }
  });

  test('GET /protocol/plans/{planId}: listed or own; unknown, unlisted-foreign and non-integer ids are 404', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const plan = await createPlan(a.api);
    const path = `/protocol/plans/${plan.planId}`;

    const seen = await b.api.get(path);
    t.is(seen.status, 200);
    t.deepEqual(seen.body, { ...plan, isOwner: false });

    t.is((await a.api.put(`${path}/list/false`)).status, 200);
    is404(t, await b.api.get(path), 'BCK.PROTOCOL.0003', 'unlisted, not owner');
    t.false((await a.api.get(path)).body.listed);

    for (const id of ['999999', '0', '-1', 'abc', '1.0', '1e3', '0x1', '99999999999999999999', '2147483648', '%20']) {
      is404(t, await a.api.get(`/protocol/plans/${id}`), 'BCK.PROTOCOL.0003', id);
    }
  });

  test('PUT /protocol/plans/{planId} updates any subset; owner only; bad input 400', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const plan = await createPlan(a.api);
    const path = `/protocol/plans/${plan.planId}`;

    const priceConfig = {
      priceType: 'FIXED_PRICE',
      tokenAddress: TOKEN_ADDRESS,
      amounts: ['7', 0],
      receivers: [testAddress(7), testAddress(8)],
    };
    const r = await a.api.put(path, { name: 'New name', priceConfig });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { success: true });
    const after = (await a.api.get(path)).body;
    t.is(after.name, 'New name');
    t.deepEqual(after.priceConfig.amounts, ['7', '0']);
    t.deepEqual(after.priceConfig.receivers, [testAddress(7), testAddress(8)]);
    t.deepEqual(after.creditsConfig, plan.creditsConfig, 'untouched');
    t.is(after.description, plan.description);
    t.is(after.createdAt, plan.createdAt);

    t.is((await a.api.put(path, { creditsConfig: { creditsType: 'FIXED', amount: '50', minAmount: 2 } })).status, 200);
    t.deepEqual((await a.api.get(path)).body.creditsConfig, { creditsType: 'FIXED', amount: '50', minAmount: '2' });

    const bad: [string, unknown][] = [
      ['empty body', {}],
      ['unknown key', { name: 'x', planId: '5' }],
      ['accessLimit not updatable', { accessLimit: 'credits' }],
      ['listed not updatable', { listed: false }],
      ['partial priceConfig', { priceConfig: { amounts: ['1'] } }],
      ['mismatched lengths', { priceConfig: { ...priceConfig, amounts: ['1'] } }],
      ['huge credits', { creditsConfig: { creditsType: 'FIXED', amount: '99999999999999999999', minAmount: '1' } }],
      ['null name', { name: null }],
    ];
    for (const [label, body] of bad) is400(t, await a.api.put(path, body), label);

    is404(t, await b.api.put(path, { name: 'hijack' }), 'BCK.PROTOCOL.0003', 'not owner');
    is404(t, await a.api.put('/protocol/plans/999999', { name: 'x' }), 'BCK.PROTOCOL.0003', 'unknown');
    is404(t, await a.api.put('/protocol/plans/mint', { name: 'x' }), 'BCK.PROTOCOL.0003', 'non-integer');
    t.is((await a.api.get(path)).body.name, 'New name', 'not changed by the refused calls');
  });

  test('PUT /protocol/plans/{planId}/list/{activate}: owner only; activate must be true or false', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const plan = await createPlan(a.api);
    const path = (v: string) => `/protocol/plans/${plan.planId}/list/${v}`;
    t.deepEqual((await a.api.put(path('false'))).body, { success: true });
    is404(t, await b.api.get(`/protocol/plans/${plan.planId}`), 'BCK.PROTOCOL.0003', 'hidden after unlisting');
    is404(t, await b.api.put(path('true')), 'BCK.PROTOCOL.0003', 'not owner');
    t.deepEqual((await a.api.put(path('true'))).body, { success: true });
    t.is((await b.api.get(`/protocol/plans/${plan.planId}`)).status, 200);
    for (const v of ['on', '0', 'False']) is400(t, await a.api.put(path(v)), v);
    is404(t, await a.api.put('/protocol/plans/abc/list/true'), 'BCK.PROTOCOL.0003', 'non-integer');
    is404(t, await a.api.put('/protocol/plans/999999/list/true'), 'BCK.PROTOCOL.0003', 'unknown');
  });

  test('GET /protocol/plans/{planId}/agents pages the agents; others see listed ones only', async (t) => {
    const a = await stack().user();
    const b = await stack().user();
    const plan = await createPlan(a.api);
    const agents = [];
    for (let i = 0; i < 3; i += 1) {
      const agent = await createAgent(a.api, { name: `agent ${i}` });
      await attachPlan(a.api, agent.agentId, plan.planId);
      agents.push(agent.agentId);
    }
    await createAgent(a.api, { name: 'unattached' });
    const [g0, g1, g2] = agents;
    const path = `/protocol/plans/${plan.planId}/agents`;

    const all = await a.api.get(path);
    t.is(all.status, 200);
    t.deepEqual(Object.keys(all.body).sort(), ['agents', 'offset', 'page', 'total']);
    t.like(all.body, { total: 3, page: 1, offset: 10 });
    t.deepEqual(
      all.body.agents.map((x: any) => x.agentId),
      [g2, g1, g0],
    );
    t.true(all.body.agents[0].isOwner);
    const paged = await a.api.get(`${path}?page=2&offset=2`);
    t.like(paged.body, { total: 3, page: 2, offset: 2 });
    t.deepEqual(
      paged.body.agents.map((x: any) => x.agentId),
      [g0],
    );

    await a.api.put(`/protocol/agents/${g1}/list/false`);
    const others = await b.api.get(path);
    t.is(others.body.total, 2);
    t.deepEqual(
      others.body.agents.map((x: any) => x.agentId),
      [g2, g0],
    );
    t.false(others.body.agents[0].isOwner);

    const lonely = await createPlan(a.api);
    t.like((await b.api.get(`/protocol/plans/${lonely.planId}/agents`)).body, { total: 0, agents: [] });

    is400(t, await a.api.get(`${path}?page=abc`), 'bad page');
    await a.api.put(`/protocol/plans/${plan.planId}/list/false`);
    is404(t, await b.api.get(path), 'BCK.PROTOCOL.0003', 'unlisted plan');
    is404(t, await a.api.get('/protocol/plans/x1/agents'), 'BCK.PROTOCOL.0003', 'non-integer');
  });
});
