// The group budget as a capped account of the spend module, against both databases, called directly with an
// injected clock (the spend takes `now`): one spend charging the group budget and the member's delegation as a
// router payment will, the exact cap with the fee counted, the period rolled by the charge itself (the last and
// first millisecond of a month, February of a leap year, year and one_shot, a spend months after the period
// ended), the release within the charge's period only, one threshold alert and one exhaustion per period under
// concurrent spends, and parallel spends in separate transactions and processes: exactly K, no deadlock.
import { randomUUID } from 'node:crypto';
import {
  type BudgetInterval,
  Delegation,
  DelegationTransaction,
  GroupBudget,
  GroupBudgetTransaction,
  OrgActivity,
} from '../../shared/db/entities/index.js';
import type { SqlTx } from '../../shared/db/sql.js';
import { budgetView } from '../../shared/organizations/budget-view.js';
import { computeFees } from '../../shared/router/fees.js';
import {
  type BudgetPeriod,
  type CappedAccount,
  type DelegationAccount,
  type GroupBudgetAccount,
  SpendRefused,
  calendarPeriod,
  firstPeriod,
  groupBudgetAccount,
  releaseIn,
  reserveIn,
  spendRefusalError,
} from '../../shared/spend/index.js';
import { runWorker } from '../support/cli.js';
import { forEachDb } from '../support/matrix.js';
import { makeGroup, makeOrg } from '../support/orgs.js';
import { insertDelegationAccount, refusalOf } from '../support/spend-accounts.js';
import type { Stack } from '../support/stack.js';

const at = (iso: string) => new Date(iso);

async function budgetOf(
  s: Stack,
  o: { limit: bigint; at: Date; interval?: BudgetInterval; alertPct?: number | null; period?: BudgetPeriod },
): Promise<GroupBudgetAccount & { groupId: string }> {
  const admin = await s.user();
  const { orgId } = await makeOrg(s, admin.userId);
  const groupId = await makeGroup(s, orgId);
  const interval = o.interval ?? 'month';
  const period = o.period ?? firstPeriod(interval, o.at);
  const em = s.ctx.db.em();
  const id = randomUUID();
  em.create(GroupBudget, {
    id,
    orgId,
    groupId,
    currency: 'usd',
    interval,
    spendingLimitCents: o.limit,
    amountSpentCents: 0n,
    periodStart: period.start,
    periodEnd: period.end,
    alertThresholdPct: o.alertPct ?? null,
    alertedPeriodStart: null,
    createdAt: o.at,
    updatedAt: o.at,
  });
  await em.flush();
  return { ...groupBudgetAccount(id, orgId), groupId };
}

/** A member's delegation that outlives every injected clock of these tests. */
async function delegationOf(s: Stack, limit = 1_000_000n): Promise<DelegationAccount> {
  const { userId } = await s.user();
  return insertDelegationAccount(s, userId, { limit, expiresAt: at('2100-01-01T00:00:00.000Z') });
}

const row = (s: Stack, id: string) => s.ctx.db.em().findOneOrFail(GroupBudget, { id });
const delegationSpent = async (s: Stack, id: string) =>
  (await s.ctx.db.em().findOneOrFail(Delegation, { id })).amountSpentCents;
const journal = (s: Stack, budgetId: string) =>
  s.ctx.db.em().find(GroupBudgetTransaction, { budgetId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
const activities = (s: Stack, budgetId: string, eventType: string) =>
  s.ctx.db.em().find(OrgActivity, { subjectId: budgetId, eventType }, { orderBy: { createdAt: 'asc', id: 'asc' } });

/** The statements a piece of work runs, as "verb table" (`update group_budget`, `insert delegation_transaction`). */
function logging(tx: SqlTx, log: string[]): SqlTx {
  const name = (sql: string) => {
    const words = sql.trim().split(/\s+/);
    const verb = words[0] ?? '';
    const table = verb === 'update' ? words[1] : verb === 'insert' ? words[2] : 'from';
    return `${verb} ${table}`;
  };
  return {
    dialect: tx.dialect,
    run: (sql, params) => {
      log.push(name(sql));
      return tx.run(sql, params);
    },
    all: (sql, params) => {
      log.push(name(sql));
      return tx.all(sql, params);
    },
  };
}

forEachDb(({ stack, test }) => {
  const run = <T>(work: (tx: SqlTx) => Promise<T>) => stack().ctx.db.sql.transaction(work);
  /** One payment's spend: the delegation named first, as a caller might; the module sorts them. */
  const pay = (
    b: GroupBudgetAccount,
    d: CappedAccount | undefined,
    cents: bigint,
    now: Date,
    reference: string | null = randomUUID(),
  ) =>
    run((tx) =>
      reserveIn(
        tx,
        {
          charges: [
            ...(d === undefined ? [] : [{ account: d, amountCents: cents }]),
            { account: b, amountCents: cents },
          ],
          reference,
        },
        now,
      ),
    );

  test('calendar periods: UTC months and years, December into January, a leap February', (t) => {
    const iso = (p: { start: Date; end: Date }) => [p.start.toISOString(), p.end.toISOString()];
    t.deepEqual(iso(calendarPeriod('month', at('2028-02-29T23:59:59.999Z'))), [
      '2028-02-01T00:00:00.000Z',
      '2028-03-01T00:00:00.000Z',
    ]);
    t.deepEqual(iso(calendarPeriod('month', at('2027-02-28T23:59:59.999Z'))), [
      '2027-02-01T00:00:00.000Z',
      '2027-03-01T00:00:00.000Z',
    ]);
    t.deepEqual(iso(calendarPeriod('month', at('2028-12-31T23:59:59.999Z'))), [
      '2028-12-01T00:00:00.000Z',
      '2029-01-01T00:00:00.000Z',
    ]);
    t.deepEqual(iso(calendarPeriod('month', at('2029-01-01T00:00:00.000Z'))), [
      '2029-01-01T00:00:00.000Z',
      '2029-02-01T00:00:00.000Z',
    ]);
    t.deepEqual(iso(calendarPeriod('year', at('2028-07-04T12:00:00.000Z'))), [
      '2028-01-01T00:00:00.000Z',
      '2029-01-01T00:00:00.000Z',
    ]);
    const oneShot = firstPeriod('one_shot', at('2028-07-04T12:00:00.000Z'));
    t.is(oneShot.start.toISOString(), '2028-07-04T12:00:00.000Z');
    t.is(oneShot.end, null);
  });

  test('K spends fit the budget exactly with the fee counted, the K+1th is refused naming the group budget', async (t) => {
    const now = at('2028-05-10T10:00:00.000Z');
    // 1.00 USDC at 100 bps: ceil(1.01 USDC in cents) = 101 cents drawn from every cap of the spend.
    const fees = computeFees(1_000_000n, 100, true);
    t.is(fees.capChargedCents, 101n);
    const K = 9;
    // 1009 fits 9 charges of 101 (909) and not a 10th; without the fee (100 each) a 10th would fit.
    const b = await budgetOf(stack(), { limit: 1009n, at: now });
    const d = await delegationOf(stack());
    const log: string[] = [];
    for (let i = 0; i < K; i++) {
      const reserved = await run((tx) =>
        reserveIn(
          i === 0 ? logging(tx, log) : tx,
          {
            charges: [
              { account: d, amountCents: fees.capChargedCents },
              { account: b, amountCents: fees.capChargedCents },
            ],
            reference: `pay-${i}`,
            description: 'router x402 exact',
          },
          now,
        ),
      );
      t.deepEqual(
        reserved.entries.map((e) => e.account.kind),
        ['groupBudget', 'delegation'],
      );
    }
    // The lock order: the group budget's UPDATE first, whatever order the spend named them in; the budget's
    // charge is its UPDATE, its journal row and one read of the row for the alerts.
    t.deepEqual(log, [
      'update group_budget',
      'insert group_budget_transaction',
      'select from',
      'update delegation',
      'insert delegation_transaction',
    ]);
    const refused = await refusalOf(t, pay(b, d, fees.capChargedCents, now));
    t.like(refused, { account: { kind: 'groupBudget', id: b.id }, why: { reason: 'over_cap', remainingCents: 100n } });
    if (refused !== undefined) {
      const e = spendRefusalError(refused);
      t.like(e, {
        code: 'BCK.ROUTER.0003',
        httpStatus: 402,
        details: `group budget ${b.id} exceeded (100 cents left in this period)`,
      });
      t.deepEqual(e.params, { groupBudgetId: b.id });
    }
    t.is((await row(stack(), b.id)).amountSpentCents, 909n);
    t.is(await delegationSpent(stack(), d.id), 909n, 'the refused spend charged nothing');
    const rows = await journal(stack(), b.id);
    t.is(rows.length, K);
    t.true(rows.every((r) => r.kind === 'reserve' && r.amountCents === 101n));
    t.true(rows.every((r) => r.periodStart.toISOString() === '2028-05-01T00:00:00.000Z'));
    t.deepEqual(
      rows.map((r) => r.reference),
      Array.from({ length: K }, (_, i) => `pay-${i}`),
    );
    t.is(await stack().ctx.db.em().count(DelegationTransaction, { delegationId: d.id }), K);
    // What is left still fits: 100 cents, then the budget is exhausted.
    await pay(b, d, 100n, now);
    t.like(await refusalOf(t, pay(b, d, 1n, now)), {
      why: { reason: 'over_cap', remainingCents: 0n },
      message: `group budget ${b.id} is exhausted`,
    });
  });

  test('a delegation refusing after the group budget rolls the budget charge back; unknown budgets are not found', async (t) => {
    const now = at('2028-05-10T10:00:00.000Z');
    const b = await budgetOf(stack(), { limit: 1000n, at: now });
    const d = await delegationOf(stack(), 5n);
    const refused = await refusalOf(t, pay(b, d, 6n, now));
    t.like(refused, { account: { kind: 'delegation', id: d.id }, why: { reason: 'over_cap' } });
    t.is((await row(stack(), b.id)).amountSpentCents, 0n);
    t.deepEqual(await journal(stack(), b.id), []);
    // Another organization's id names no budget: a spend never crosses organizations.
    const other = await budgetOf(stack(), { limit: 1000n, at: now });
    const foreign = groupBudgetAccount(b.id, other.orgId);
    const notFound = await refusalOf(t, pay(foreign, undefined, 1n, now));
    t.like(notFound, { why: { reason: 'not_found' }, message: `group budget ${b.id} not found` });
    t.like(notFound === undefined ? undefined : spendRefusalError(notFound), {
      code: 'BCK.ROUTER.0003',
      params: { groupBudgetId: b.id },
    });
  });

  test('month periods roll in the charge: last and first millisecond, a leap February, a spend months later', async (t) => {
    const b = await budgetOf(stack(), { limit: 100n, at: at('2028-01-15T00:00:00.000Z') });
    const check = async (start: string, end: string, spent: bigint) => {
      const r = await row(stack(), b.id);
      t.deepEqual([r.periodStart.toISOString(), r.periodEnd?.toISOString(), r.amountSpentCents], [start, end, spent]);
    };
    await pay(b, undefined, 60n, at('2028-01-31T23:59:59.999Z'));
    await check('2028-01-01T00:00:00.000Z', '2028-02-01T00:00:00.000Z', 60n);
    t.like(await refusalOf(t, pay(b, undefined, 50n, at('2028-01-31T23:59:59.999Z'))), {
      why: { reason: 'over_cap', remainingCents: 40n },
    });
    // The first millisecond of February starts February with this charge as its whole spend.
    await pay(b, undefined, 50n, at('2028-02-01T00:00:00.000Z'));
    await check('2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z', 50n);
    // 29 February 2028 is still February.
    await pay(b, undefined, 50n, at('2028-02-29T23:59:59.999Z'));
    await check('2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z', 100n);
    t.like(await refusalOf(t, pay(b, undefined, 1n, at('2028-02-29T23:59:59.999Z'))), {
      why: { reason: 'over_cap', remainingCents: 0n },
    });
    await pay(b, undefined, 1n, at('2028-03-01T00:00:00.000Z'));
    await check('2028-03-01T00:00:00.000Z', '2028-04-01T00:00:00.000Z', 1n);
    // Months after the period ended: the period containing now (July), not the one after March. A charge larger
    // than the old period's remainder fits: the old spend is gone with its period.
    t.like(await refusalOf(t, pay(b, undefined, 100n, at('2028-03-31T23:59:59.999Z'))), {
      why: { reason: 'over_cap', remainingCents: 99n },
    });
    t.like(await refusalOf(t, pay(b, undefined, 101n, at('2028-07-15T12:00:00.000Z'))), {
      why: { reason: 'over_cap', remainingCents: 100n },
    });
    await pay(b, undefined, 100n, at('2028-07-15T12:00:00.000Z'));
    await check('2028-07-01T00:00:00.000Z', '2028-08-01T00:00:00.000Z', 100n);
    t.deepEqual(
      (await journal(stack(), b.id)).map((r) => [r.amountCents, r.periodStart.toISOString()]),
      [
        [60n, '2028-01-01T00:00:00.000Z'],
        [50n, '2028-02-01T00:00:00.000Z'],
        [50n, '2028-02-01T00:00:00.000Z'],
        [1n, '2028-03-01T00:00:00.000Z'],
        [100n, '2028-07-01T00:00:00.000Z'],
      ],
    );
    // A reader after the period ended sees the period containing now, nothing spent (derived, no job ran).
    t.like(budgetView(await row(stack(), b.id), at('2028-09-02T00:00:00.000Z')), {
      periodStart: '2028-09-01T00:00:00.000Z',
      periodEnd: '2028-10-01T00:00:00.000Z',
      amountSpentCents: '0',
      remainingBudgetCents: '100',
      percentUsed: 0,
      status: 'Active',
    });
    t.like(budgetView(await row(stack(), b.id), at('2028-07-31T23:59:59.999Z')), {
      amountSpentCents: '100',
      percentUsed: 100,
      status: 'Exhausted',
    });
  });

  test('year periods roll on 1 January (years later: the year containing now); one_shot never rolls', async (t) => {
    const y = await budgetOf(stack(), { limit: 100n, interval: 'year', at: at('2028-06-01T00:00:00.000Z') });
    const period = async (id: string) => {
      const r = await row(stack(), id);
      return [r.periodStart.toISOString(), r.periodEnd?.toISOString() ?? null, r.amountSpentCents];
    };
    await pay(y, undefined, 80n, at('2028-12-31T23:59:59.999Z'));
    t.deepEqual(await period(y.id), ['2028-01-01T00:00:00.000Z', '2029-01-01T00:00:00.000Z', 80n]);
    t.like(await refusalOf(t, pay(y, undefined, 30n, at('2028-12-31T23:59:59.999Z'))), {
      why: { remainingCents: 20n },
    });
    await pay(y, undefined, 30n, at('2029-01-01T00:00:00.000Z'));
    t.deepEqual(await period(y.id), ['2029-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', 30n]);
    await pay(y, undefined, 5n, at('2031-06-01T00:00:00.000Z'));
    t.deepEqual(await period(y.id), ['2031-01-01T00:00:00.000Z', '2032-01-01T00:00:00.000Z', 5n]);

    const created = at('2028-01-10T10:00:00.000Z');
    const o = await budgetOf(stack(), { limit: 100n, interval: 'one_shot', at: created });
    await pay(o, undefined, 60n, created);
    await pay(o, undefined, 40n, at('2035-01-01T00:00:00.000Z'));
    t.deepEqual(await period(o.id), ['2028-01-10T10:00:00.000Z', null, 100n]);
    t.like(await refusalOf(t, pay(o, undefined, 1n, at('2040-01-01T00:00:00.000Z'))), {
      why: { reason: 'over_cap', remainingCents: 0n },
    });
    t.like(budgetView(await row(stack(), o.id), at('2050-01-01T00:00:00.000Z')), {
      periodStart: '2028-01-10T10:00:00.000Z',
      periodEnd: null,
      amountSpentCents: '100',
      status: 'Exhausted',
    });
  });

  test('a release gives back only within the period its charge fell in', async (t) => {
    const b = await budgetOf(stack(), { limit: 100n, at: at('2028-03-05T00:00:00.000Z') });
    const d = await delegationOf(stack());
    const release = (cents: bigint, reference: string | null, now: Date, withDelegation = false) =>
      run((tx) =>
        releaseIn(
          tx,
          {
            charges: [
              { account: b, amountCents: cents },
              ...(withDelegation ? [{ account: d, amountCents: cents }] : []),
            ],
            reference,
            description: 'fee leg not earned',
          },
          now,
        ),
      );
    await pay(b, undefined, 30n, at('2028-03-10T00:00:00.000Z'), 'a');
    t.true(await release(30n, 'a', at('2028-03-11T00:00:00.000Z')));
    t.is((await row(stack(), b.id)).amountSpentCents, 0n);
    t.false(await release(30n, 'a', at('2028-03-11T00:00:00.000Z')), 'never below zero');

    // Charged in March, released after April's first charge rolled the period: April never paid for it.
    await pay(b, d, 40n, at('2028-03-20T00:00:00.000Z'), 'b');
    await pay(b, undefined, 10n, at('2028-04-02T00:00:00.000Z'), 'c');
    t.false(await release(40n, 'b', at('2028-04-03T00:00:00.000Z'), true), 'the budget gave nothing back');
    t.is((await row(stack(), b.id)).amountSpentCents, 10n);
    t.is(await delegationSpent(stack(), d.id), 0n, 'the delegation (no period) still got its 40 back');
    // Without a reference no charge is named: nothing is given back.
    t.false(await release(10n, null, at('2028-04-03T00:00:00.000Z')));
    t.true(await release(10n, 'c', at('2028-04-04T00:00:00.000Z')));
    t.is((await row(stack(), b.id)).amountSpentCents, 0n);
    t.deepEqual(
      (await journal(stack(), b.id)).map((r) => [r.kind, r.amountCents, r.reference, r.periodStart.toISOString()]),
      [
        ['reserve', 30n, 'a', '2028-03-01T00:00:00.000Z'],
        ['release', -30n, 'a', '2028-03-01T00:00:00.000Z'],
        ['reserve', 40n, 'b', '2028-03-01T00:00:00.000Z'],
        ['reserve', 10n, 'c', '2028-04-01T00:00:00.000Z'],
        ['release', -10n, 'c', '2028-04-01T00:00:00.000Z'],
      ],
    );
    // A release after the period ended but before any charge rolled it still closes its own period's books.
    await pay(b, undefined, 20n, at('2028-04-30T00:00:00.000Z'), 'e');
    t.true(await release(20n, 'e', at('2028-05-02T00:00:00.000Z')));
    t.like(await row(stack(), b.id), { amountSpentCents: 0n });
  });

  test('N concurrent spends crossing the threshold record ONE alert and ONE exhaustion per period', async (t) => {
    const N = 20;
    const b = await budgetOf(stack(), { limit: 100n, alertPct: 50, at: at('2028-05-01T00:00:00.000Z') });
    const burst = async (now: Date) => {
      const results = await Promise.allSettled(Array.from({ length: N }, () => pay(b, undefined, 5n, now)));
      t.deepEqual(
        results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
        [],
      );
    };
    // Below the threshold: nothing recorded.
    await pay(b, undefined, 5n, at('2028-05-02T00:00:00.000Z'), 'small');
    t.deepEqual(await activities(stack(), b.id, 'budget.threshold_crossed'), []);
    t.true(
      await run((tx) =>
        releaseIn(
          tx,
          { charges: [{ account: b, amountCents: 5n }], reference: 'small' },
          at('2028-05-02T00:00:00.000Z'),
        ),
      ),
    );

    await burst(at('2028-05-10T00:00:00.000Z'));
    const may = await row(stack(), b.id);
    t.is(may.amountSpentCents, 100n);
    t.is(may.alertedPeriodStart?.toISOString(), '2028-05-01T00:00:00.000Z');
    const crossed = await activities(stack(), b.id, 'budget.threshold_crossed');
    t.is(crossed.length, 1);
    t.like(crossed[0], {
      orgId: b.orgId,
      actorUserId: null,
      subjectType: 'budget',
      details: { groupId: b.groupId, currency: 'usd', periodStart: '2028-05-01T00:00:00.000Z', alertThresholdPct: 50 },
    });
    t.is((await activities(stack(), b.id, 'budget.exhausted')).length, 1);
    // Exhausted again in the same period after a release: still one exhaustion.
    const last = (await journal(stack(), b.id)).at(-1)?.reference ?? null;
    t.true(
      await run((tx) =>
        releaseIn(tx, { charges: [{ account: b, amountCents: 5n }], reference: last }, at('2028-05-11T00:00:00.000Z')),
      ),
    );
    await pay(b, undefined, 5n, at('2028-05-12T00:00:00.000Z'));
    t.is((await activities(stack(), b.id, 'budget.exhausted')).length, 1);

    // June is a new period: one more of each.
    await burst(at('2028-06-03T00:00:00.000Z'));
    const after = await activities(stack(), b.id, 'budget.threshold_crossed');
    t.deepEqual(
      after.map((a) => a.details.periodStart),
      ['2028-05-01T00:00:00.000Z', '2028-06-01T00:00:00.000Z'],
    );
    t.is((await activities(stack(), b.id, 'budget.exhausted')).length, 2);
  });

  test('parallel spends in separate transactions, budget + delegations named in both orders: exactly K, no deadlock', async (t) => {
    const now = at('2028-05-10T10:00:00.000Z');
    const K = 23;
    const N = 60;
    const b = await budgetOf(stack(), { limit: BigInt(K) * 3n + 2n, at: now });
    const ds = await Promise.all([0, 1, 2, 3].map(() => delegationOf(stack())));
    const results = await Promise.allSettled(
      Array.from({ length: N }, (_, i) => {
        const d = ds[i % ds.length];
        if (d === undefined) throw new Error('no delegation');
        const charges = [
          { account: b, amountCents: 3n },
          { account: d, amountCents: 3n },
        ];
        if (i % 2 === 1) charges.reverse();
        return run((tx) => reserveIn(tx, { charges, reference: `p${i}` }, now));
      }),
    );
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    t.deepEqual(
      failures.filter((e) => !(e instanceof SpendRefused && e.account.id === b.id)).map(String),
      [],
      'only refusals by the budget (a deadlock would be a driver error)',
    );
    t.is(results.filter((r) => r.status === 'fulfilled').length, K);
    t.is((await row(stack(), b.id)).amountSpentCents, BigInt(K) * 3n);
    const delegated = await Promise.all(ds.map((d) => delegationSpent(stack(), d.id)));
    t.is(
      delegated.reduce((s, v) => s + v, 0n),
      BigInt(K) * 3n,
    );
    const rows = await journal(stack(), b.id);
    t.is(rows.length, K);
    t.is(
      rows.reduce((s, r) => s + r.amountCents, 0n),
      BigInt(K) * 3n,
    );
  });

  test('spends from two processes against one budget fitting exactly K', async (t) => {
    const now = '2028-05-10T10:00:00.000Z';
    const K = 37;
    const b = await budgetOf(stack(), { limit: BigInt(K) * 3n + 2n, at: at(now) });
    const ds = await Promise.all([0, 1, 2].map(() => delegationOf(stack())));
    const delegations = ds.map((d) => ({ id: d.id, userId: d.userId }));
    const args = { budgetId: b.id, orgId: b.orgId, delegations, count: 60, amountCents: '3', now };
    const [x, y] = await Promise.all([worker(stack().env, args), worker(stack().env, args)]);
    t.deepEqual([...x.errors, ...y.errors], []);
    t.is(x.reserved + y.reserved, K);
    t.is(x.refused + y.refused, 120 - K);
    t.is((await row(stack(), b.id)).amountSpentCents, BigInt(K) * 3n);
    t.is((await journal(stack(), b.id)).length, K);
  });
});

const worker = (env: Record<string, string>, args: object) =>
  runWorker<{ reserved: number; refused: number; errors: string[] }>('test/support/group-budget-worker.ts', args, env);
