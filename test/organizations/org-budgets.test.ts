// The group budget endpoints over HTTP, on both databases: every endpoint with every role (an Admin, a Member of
// the group, a Member not in it, an outsider, the Admin of another organization), the exact budget shape, the
// period a reader sees once the stored one ended, the update rules (the interval change restarting the period),
// the 409/404/403/400 answers, and a property test of the create and update bodies (2xx or 400, never a 5xx).
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import fc from 'fast-check';
import { GroupBudget, GroupBudgetTransaction, OrgActivity, OrgGroup } from '../../shared/db/entities/index.js';
import { calendarPeriod, groupBudgetAccount, reserveIn } from '../../shared/spend/index.js';
import type { ApiClient, ApiResponse } from '../support/http.js';
import { forEachDb } from '../support/matrix.js';
import { makeGroup, makeMember, makeOrg } from '../support/orgs.js';
import { type Stack, newUsers } from '../support/stack.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

const BUDGET_KEYS = [
  'budgetId',
  'groupId',
  'currency',
  'interval',
  'spendingLimitCents',
  'amountSpentCents',
  'remainingBudgetCents',
  'percentUsed',
  'periodStart',
  'periodEnd',
  'alertThresholdPct',
  'status',
  'createdAt',
  'updatedAt',
];

/** An organization with every role, a group the in-group Member belongs to, and another organization. */
async function world(s: Stack) {
  const [admin, member, stranger, outsider, otherAdmin] = await newUsers(s, 5);
  const { orgId } = await makeOrg(s, admin.userId);
  const memberId = await makeMember(s, orgId, member.userId);
  await makeMember(s, orgId, stranger.userId);
  const groupId = await makeGroup(s, orgId, [memberId]);
  const otherGroupId = await makeGroup(s, orgId, [], 'Other team');
  const other = await makeOrg(s, otherAdmin.userId, 'Other org');
  const foreignGroupId = await makeGroup(s, other.orgId);
  const base = (o: string = orgId, g: string = groupId) => `/organizations/${o}/groups/${g}/budgets`;
  return {
    admin: admin.api,
    member: member.api,
    stranger: stranger.api,
    outsider: outsider.api,
    otherAdmin: otherAdmin.api,
    orgId,
    groupId,
    otherGroupId,
    otherOrgId: other.orgId,
    foreignGroupId,
    base,
  };
}

const patch = (api: ApiClient, path: string, body: unknown) => api.call('PATCH', path, body);

function refused(t: ExecutionContext, r: ApiResponse<any>, status: number, code: string, what = '') {
  t.is(r.status, status, `${what} ${r.text.slice(0, 300)}`);
  t.is(r.body?.code, code, what);
}

forEachDb(({ stack, test }) => {
  test('create: 201 with the exact budget shape; Admins only; one budget per currency (409)', async (t) => {
    const w = await world(stack());
    const r = await w.admin.post(w.base(), { spendingLimitCents: '50000', currency: 'usd', alertThresholdPct: 80 });
    t.is(r.status, 201, r.text);
    t.deepEqual(Object.keys(r.body), ['success', 'budget']);
    t.is(r.body.success, true);
    const b = r.body.budget;
    t.deepEqual(Object.keys(b), BUDGET_KEYS);
    const period = calendarPeriod('month', new Date(b.createdAt));
    t.deepEqual(b, {
      budgetId: b.budgetId,
      groupId: w.groupId,
      currency: 'usd',
      interval: 'month',
      spendingLimitCents: '50000',
      amountSpentCents: '0',
      remainingBudgetCents: '50000',
      percentUsed: 0,
      periodStart: period.start.toISOString(),
      periodEnd: period.end.toISOString(),
      alertThresholdPct: 80,
      status: 'Active',
      createdAt: b.createdAt,
      updatedAt: b.createdAt,
    });
    t.regex(b.budgetId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    t.is(new Date(b.createdAt).toISOString(), b.createdAt);
    const created = await stack().ctx.db.em().find(OrgActivity, { subjectId: b.budgetId, eventType: 'budget.created' });
    t.is(created.length, 1);
    t.like(created[0], {
      orgId: w.orgId,
      subjectType: 'budget',
      details: { groupId: w.groupId, currency: 'usd', interval: 'month', spendingLimitCents: '50000' },
    });

    // A second budget in the same currency, however it is spelled, is a conflict naming the first.
    const again = await w.admin.post(w.base(), { spendingLimitCents: 1, currency: 'USD' });
    refused(t, again, 409, 'BCK.ORG.0008');
    t.is(again.body.params, JSON.stringify({ budgetId: b.budgetId }));
    // Other currencies: their own budgets; interval one_shot has no end, year runs a calendar year.
    const eur = await w.admin.post(w.base(), { spendingLimitCents: 700, currency: 'EUR', interval: 'one_shot' });
    t.is(eur.status, 201, eur.text);
    t.like(eur.body.budget, { currency: 'eur', interval: 'one_shot', periodEnd: null, alertThresholdPct: null });
    t.is(eur.body.budget.periodStart, eur.body.budget.createdAt);
    const usdc = await w.admin.post(w.base(), { spendingLimitCents: '1', currency: 'usdc', interval: 'year' });
    const year = calendarPeriod('year', new Date(usdc.body.budget.createdAt));
    t.like(usdc.body.budget, { periodStart: year.start.toISOString(), periodEnd: year.end.toISOString() });

    const body = { spendingLimitCents: '100', currency: 'eurc' };
    refused(t, await w.member.post(w.base(), body), 403, 'BCK.ORG.0002', 'member of the group');
    refused(t, await w.stranger.post(w.base(), body), 403, 'BCK.ORG.0002', 'member not in the group');
    refused(t, await w.outsider.post(w.base(), body), 404, 'BCK.ORG.0001', 'outsider');
    refused(t, await w.otherAdmin.post(w.base(), body), 404, 'BCK.ORG.0001', 'admin of another org');
    // Access comes before the body: an outsider's invalid body is still the 404, a Member's the 403.
    refused(t, await w.outsider.post(w.base(), { nonsense: true }), 404, 'BCK.ORG.0001');
    refused(t, await w.member.post(w.base(), { nonsense: true }), 403, 'BCK.ORG.0002');
    // Cross-organization ids: another organization's group, an unknown group, a malformed id.
    refused(t, await w.admin.post(w.base(w.orgId, w.foreignGroupId), body), 404, 'BCK.ORG.0003');
    refused(t, await w.admin.post(w.base(w.orgId, randomUUID()), body), 404, 'BCK.ORG.0003');
    refused(t, await w.admin.post(w.base(w.orgId, 'not-a-uuid'), body), 404, 'BCK.ORG.0003');
    refused(t, await w.admin.post(w.base(w.otherOrgId, w.foreignGroupId), body), 404, 'BCK.ORG.0001');
    refused(t, await w.admin.post(w.base('not-a-uuid'), body), 404, 'BCK.ORG.0001');
    // A deleted (deactivated) group takes no new budget.
    const inactive = await makeGroup(stack(), w.orgId);
    await stack().ctx.db.em().nativeUpdate(OrgGroup, { id: inactive }, { active: false });
    refused(t, await w.admin.post(w.base(w.orgId, inactive), body), 404, 'BCK.ORG.0003', 'deactivated group');
    t.is((await w.admin.get(w.base())).body.budgets.length, 3, 'nothing refused was created');
  });

  test('create and update bodies: 400 for every malformed field', async (t) => {
    const w = await world(stack());
    const bad: unknown[] = [
      undefined,
      null,
      [],
      'usd',
      {},
      { currency: 'usd' },
      { spendingLimitCents: '100' },
      { spendingLimitCents: 0, currency: 'usd' },
      { spendingLimitCents: -1, currency: 'usd' },
      { spendingLimitCents: 1.5, currency: 'usd' },
      { spendingLimitCents: '1.50', currency: 'usd' },
      { spendingLimitCents: '007', currency: 'usd' },
      { spendingLimitCents: 2 ** 53, currency: 'usd' },
      { spendingLimitCents: '1000000000001', currency: 'usd' },
      { spendingLimitCents: '100', currency: 'gbp' },
      { spendingLimitCents: '100', currency: 'usd\u0000' },
      { spendingLimitCents: '100', currency: 'usd', interval: 'week' },
      { spendingLimitCents: '100', currency: 'usd', alertThresholdPct: 0 },
      { spendingLimitCents: '100', currency: 'usd', alertThresholdPct: 101 },
      { spendingLimitCents: '100', currency: 'usd', alertThresholdPct: 50.5 },
      { spendingLimitCents: '100', currency: 'usd', alertThresholdPct: '50' },
      { spendingLimitCents: '100', currency: 'usd', amountSpentCents: '0' },
    ];
    for (const body of bad) refused(t, await w.admin.post(w.base(), body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    t.deepEqual((await w.admin.get(w.base())).body.budgets, []);

    const created = await w.admin.post(w.base(), { spendingLimitCents: 1000, currency: 'usd' });
    const path = `${w.base()}/${created.body.budget.budgetId}`;
    const badPatches: unknown[] = [
      {},
      null,
      [],
      { spendingLimitCents: 0 },
      { spendingLimitCents: '-5' },
      { alertThresholdPct: 0 },
      { interval: 'weekly' },
      { currency: 'eur' },
      { spendingLimitCents: 5, amountSpentCents: '0' },
    ];
    for (const body of badPatches)
      refused(t, await patch(w.admin, path, body), 400, 'BCK.HTTP.0400', JSON.stringify(body));
    t.like((await w.admin.get(path)).body.budget, { spendingLimitCents: '1000', interval: 'month' });
  });

  test('read: Admins and the group members; other Members, outsiders and other organizations get 404', async (t) => {
    const w = await world(stack());
    const usd = (await w.admin.post(w.base(), { spendingLimitCents: 900, currency: 'usd' })).body.budget;
    const eur = (await w.admin.post(w.base(), { spendingLimitCents: 800, currency: 'eur' })).body.budget;
    const path = `${w.base()}/${usd.budgetId}`;
    for (const [who, api] of [
      ['admin', w.admin],
      ['member of the group', w.member],
    ] as const) {
      const list = await api.get(w.base());
      t.is(list.status, 200, who);
      t.deepEqual(Object.keys(list.body), ['success', 'budgets']);
      t.deepEqual(list.body.budgets, [eur, usd], `${who}: one per currency, in currency order`);
      const one = await api.get(path);
      t.is(one.status, 200, who);
      t.deepEqual(one.body, { success: true, budget: usd });
    }
    for (const [who, api, code] of [
      ['member not in the group', w.stranger, 'BCK.ORG.0003'],
      ['outsider', w.outsider, 'BCK.ORG.0001'],
      ['admin of another org', w.otherAdmin, 'BCK.ORG.0001'],
    ] as const) {
      refused(t, await api.get(w.base()), 404, code, `${who} list`);
      refused(t, await api.get(path), 404, code, `${who} one`);
    }
    // Ids of elsewhere: another group of the organization, another organization's budget, malformed, unknown.
    refused(t, await w.admin.get(`${w.base(w.orgId, w.otherGroupId)}/${usd.budgetId}`), 404, 'BCK.ORG.0006');
    const foreign = await w.otherAdmin.post(w.base(w.otherOrgId, w.foreignGroupId), {
      spendingLimitCents: 5,
      currency: 'usd',
    });
    t.is(foreign.status, 201);
    refused(t, await w.admin.get(`${w.base()}/${foreign.body.budget.budgetId}`), 404, 'BCK.ORG.0006');
    refused(
      t,
      await w.admin.get(`${w.base(w.otherOrgId, w.foreignGroupId)}/${foreign.body.budget.budgetId}`),
      404,
      'BCK.ORG.0001',
    );
    refused(t, await w.admin.get(`${w.base()}/${randomUUID()}`), 404, 'BCK.ORG.0006');
    refused(t, await w.admin.get(`${w.base()}/not-a-budget`), 404, 'BCK.ORG.0006');
    refused(t, await w.admin.get(w.base(w.orgId, w.foreignGroupId)), 404, 'BCK.ORG.0003');
    t.deepEqual((await w.admin.get(w.base(w.orgId, w.otherGroupId))).body, { success: true, budgets: [] });
  });

  test('what a reader sees: spent in the current period, percentUsed in hundredths rounded down, Exhausted', async (t) => {
    const w = await world(stack());
    const em = stack().ctx.db.em();
    const now = new Date();
    const current = calendarPeriod('month', now);
    const insert = (currency: string, limit: bigint, spent: bigint, start: Date, end: Date) => {
      const id = randomUUID();
      em.create(GroupBudget, {
        id,
        orgId: w.orgId,
        groupId: w.groupId,
        currency,
        interval: 'month',
        spendingLimitCents: limit,
        amountSpentCents: spent,
        periodStart: start,
        periodEnd: end,
        alertThresholdPct: null,
        alertedPeriodStart: null,
        createdAt: start,
        updatedAt: start,
      });
      return id;
    };
    // A period that ended years ago and was never rolled (no spend since): read as the current month, 0 spent.
    const stale = insert('usd', 300n, 300n, new Date('2020-03-01T00:00:00.000Z'), new Date('2020-04-01T00:00:00.000Z'));
    const third = insert('eur', 300n, 100n, current.start, current.end);
    const twoThirds = insert('usdc', 3n, 2n, current.start, current.end);
    const full = insert('eurc', 250n, 250n, current.start, current.end);
    await em.flush();
    const read = async (id: string) => (await w.member.get(`${w.base()}/${id}`)).body.budget;
    t.like(await read(stale), {
      periodStart: current.start.toISOString(),
      periodEnd: current.end.toISOString(),
      amountSpentCents: '0',
      remainingBudgetCents: '300',
      percentUsed: 0,
      status: 'Active',
    });
    t.like(await read(third), { amountSpentCents: '100', remainingBudgetCents: '200', percentUsed: 33.33 });
    t.like(await read(twoThirds), { amountSpentCents: '2', remainingBudgetCents: '1', percentUsed: 66.66 });
    t.like(await read(full), { remainingBudgetCents: '0', percentUsed: 100, status: 'Exhausted' });
    // A limit lowered below what the period spent: Exhausted, nothing remaining, more than 100 percent used.
    const lowered = await patch(w.admin, `${w.base()}/${third}`, { spendingLimitCents: '80' });
    t.like(lowered.body.budget, { remainingBudgetCents: '0', percentUsed: 125, status: 'Exhausted' });
  });

  test('update: Admins only; budget.updated with old and new values; an interval change restarts the period', async (t) => {
    const w = await world(stack());
    const created = (
      await w.admin.post(w.base(), { spendingLimitCents: '1000', currency: 'usd', alertThresholdPct: 50 })
    ).body.budget;
    const path = `${w.base()}/${created.budgetId}`;
    // 600 spent this month (over the threshold: the alert state is this period's).
    const account = groupBudgetAccount(created.budgetId, w.orgId);
    await stack().ctx.db.sql.transaction((tx) =>
      reserveIn(tx, { charges: [{ account, amountCents: 600n }], reference: 'before' }, new Date()),
    );
    for (const [who, api, status, code] of [
      ['member of the group', w.member, 403, 'BCK.ORG.0002'],
      ['member not in the group', w.stranger, 403, 'BCK.ORG.0002'],
      ['outsider', w.outsider, 404, 'BCK.ORG.0001'],
      ['admin of another org', w.otherAdmin, 404, 'BCK.ORG.0001'],
    ] as const)
      refused(t, await patch(api, path, { spendingLimitCents: '1' }), status, code, who);
    refused(t, await patch(w.admin, `${w.base()}/${randomUUID()}`, { spendingLimitCents: '1' }), 404, 'BCK.ORG.0006');
    refused(
      t,
      await patch(w.admin, `${w.base(w.orgId, w.otherGroupId)}/${created.budgetId}`, { spendingLimitCents: '1' }),
      404,
      'BCK.ORG.0006',
    );

    // Limit and threshold: the period and what it spent stay; the threshold's alert state is cleared.
    const limits = await patch(w.admin, path, { spendingLimitCents: '2000', alertThresholdPct: 25 });
    t.is(limits.status, 200, limits.text);
    t.deepEqual(Object.keys(limits.body), ['success', 'budget']);
    t.like(limits.body.budget, {
      spendingLimitCents: '2000',
      alertThresholdPct: 25,
      amountSpentCents: '600',
      remainingBudgetCents: '1400',
      percentUsed: 30,
      periodStart: created.periodStart,
      createdAt: created.createdAt,
    });
    t.true(Date.parse(limits.body.budget.updatedAt) >= Date.parse(created.updatedAt));
    t.is((await stack().ctx.db.em().findOneOrFail(GroupBudget, { id: created.budgetId })).alertedPeriodStart, null);
    // Nothing changed: 200, nothing logged.
    t.is((await patch(w.admin, path, { spendingLimitCents: '2000' })).status, 200);

    // The interval: a new period from the moment of the change to the end of the new interval's calendar period.
    const yearly = await patch(w.admin, path, { interval: 'year', alertThresholdPct: null });
    t.is(yearly.status, 200, yearly.text);
    const b = yearly.body.budget;
    const year = calendarPeriod('year', new Date(b.updatedAt));
    t.like(b, {
      interval: 'year',
      alertThresholdPct: null,
      amountSpentCents: '0',
      remainingBudgetCents: '2000',
      periodStart: b.updatedAt,
      periodEnd: year.end.toISOString(),
      status: 'Active',
    });
    const journal = await stack()
      .ctx.db.em()
      .find(GroupBudgetTransaction, { budgetId: created.budgetId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    t.deepEqual(
      journal.map((r) => [r.kind, r.amountCents, r.periodStart.toISOString()]),
      [
        ['reserve', 600n, created.periodStart],
        ['restart', -600n, created.periodStart],
      ],
    );
    const oneShot = await patch(w.admin, path, { interval: 'one_shot' });
    t.like(oneShot.body.budget, { interval: 'one_shot', periodEnd: null, periodStart: oneShot.body.budget.updatedAt });

    const updates = await stack()
      .ctx.db.em()
      .find(
        OrgActivity,
        { subjectId: created.budgetId, eventType: 'budget.updated' },
        { orderBy: { createdAt: 'asc', id: 'asc' } },
      );
    t.deepEqual(
      updates.map((a) => a.details),
      [
        {
          groupId: w.groupId,
          oldSpendingLimitCents: '1000',
          newSpendingLimitCents: '2000',
          oldAlertThresholdPct: 50,
          newAlertThresholdPct: 25,
        },
        {
          groupId: w.groupId,
          oldAlertThresholdPct: 25,
          newAlertThresholdPct: null,
          oldInterval: 'month',
          newInterval: 'year',
          writtenOffCents: '600',
          periodStart: b.updatedAt,
        },
        {
          groupId: w.groupId,
          oldInterval: 'year',
          newInterval: 'one_shot',
          writtenOffCents: '0',
          periodStart: oneShot.body.budget.updatedAt,
        },
      ],
    );
    t.true(updates.every((a) => a.orgId === w.orgId && a.subjectType === 'budget'));
  });

  test('property: any create or update body is answered 2xx or 400, never a 5xx', async (t) => {
    t.timeout(600_000);
    const w = await world(stack());
    const budget = (await w.admin.post(w.base(), { spendingLimitCents: '1000', currency: 'usd' })).body.budget;
    const path = `${w.base()}/${budget.budgetId}`;
    const scalar = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    );
    const field = {
      spendingLimitCents: fc.oneof(
        fc.integer({ min: -10, max: 2_000_000 }),
        fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
        scalar,
      ),
      currency: fc.oneof(fc.constantFrom('usd', 'EUR', 'usdc', 'Eurc', 'gbp', 'usd '), scalar),
      interval: fc.oneof(fc.constantFrom('month', 'year', 'one_shot', 'Month', 'week'), scalar),
      alertThresholdPct: fc.oneof(fc.integer({ min: -5, max: 105 }), scalar),
    };
    const body = fc.oneof(
      { weight: 4, arbitrary: fc.record(field, { requiredKeys: [] }) },
      { weight: 1, arbitrary: fc.record({ ...field, extra: scalar }, { requiredKeys: [] }) },
      { weight: 1, arbitrary: fc.jsonValue() },
    );
    const answers = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        // A fresh group per create: a valid body is a 201, never the 409 of an earlier run's budget.
        const groupId = await makeGroup(stack(), w.orgId);
        const created = await w.admin.post(w.base(w.orgId, groupId), b);
        const updated = await patch(w.admin, path, b);
        for (const [r, ok] of [
          [created, 201],
          [updated, 200],
        ] as const) {
          answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
          if (r.status !== ok && !(r.status === 400 && r.body?.code === 'BCK.HTTP.0400'))
            throw new Error(`${r.status} for ${JSON.stringify(b)}: ${r.text.slice(0, 300)}`);
        }
      }),
      // Random bodies are mostly refused; these examples make every run see both answers.
      {
        numRuns: RUNS,
        examples: [
          [{ spendingLimitCents: '2500', currency: 'usd', interval: 'year', alertThresholdPct: 80 }],
          [{ spendingLimitCents: 'ten', currency: 'usd' }],
        ],
      },
    );
    t.true((answers.get(400) ?? 0) > 0);
    t.true((answers.get(200) ?? 0) + (answers.get(201) ?? 0) > 0, JSON.stringify([...answers]));
  });
});
