// The spend module against both databases: what one charge runs (two statements: the conditional UPDATE and its
// journal row), the one refusal naming the account and why, the one lock order (spends naming the same accounts
// in opposite orders, in parallel, neither deadlock nor overspend), and the release.
import { randomUUID } from 'node:crypto';
import { Delegation, type DelegationStoredStatus, DelegationTransaction } from '../../shared/db/entities/index.js';
import type { SqlTx } from '../../shared/db/sql.js';
import {
  type CappedAccount,
  SpendRefused,
  delegationAccount,
  predictDelegationRefusal,
  releaseIn,
  reserveIn,
  spendRefusalError,
} from '../../shared/spend/index.js';
import { forEachDb } from '../support/matrix.js';
import { insertDelegationAccount, refusalOf } from '../support/spend-accounts.js';
import type { Stack } from '../support/stack.js';

const HOUR = 3_600_000;

function delegationOf(
  stack: Stack,
  userId: string,
  o: { limit: bigint; spent?: bigint; status?: DelegationStoredStatus; expiresInMs?: number; id?: string },
): Promise<CappedAccount> {
  const { expiresInMs, ...rest } = o;
  return insertDelegationAccount(stack, userId, { ...rest, expiresAt: new Date(Date.now() + (expiresInMs ?? HOUR)) });
}

const spent = async (stack: Stack, id: string) =>
  (await stack.ctx.db.em().findOneOrFail(Delegation, { id })).amountSpentCents;

/** The statements a piece of work runs on the transaction. */
function counting(tx: SqlTx, log: string[]): SqlTx {
  return {
    dialect: tx.dialect,
    run: (sql, params) => {
      log.push(sql.trim().split(/\s+/)[0] ?? '');
      return tx.run(sql, params);
    },
    all: (sql, params) => {
      log.push(sql.trim().split(/\s+/)[0] ?? '');
      return tx.all(sql, params);
    },
  };
}

forEachDb(({ stack, test }) => {
  test('one charge is ONE conditional UPDATE plus its journal row; refusals name the account and why', async (t) => {
    const { userId } = await stack().user();
    const now = new Date();
    const run = <T>(work: (tx: SqlTx) => Promise<T>) => stack().ctx.db.sql.transaction(work);
    const a = await delegationOf(stack(), userId, { limit: 10n });
    const log: string[] = [];
    const reserved = await run((tx) =>
      reserveIn(counting(tx, log), { charges: [{ account: a, amountCents: 4n }], reference: 'r1' }, now),
    );
    t.deepEqual(log, ['update', 'insert']);
    t.is(reserved.entries.length, 1);
    t.is(await spent(stack(), a.id), 4n);
    const rows = await stack().ctx.db.em().find(DelegationTransaction, { delegationId: a.id });
    t.deepEqual(
      rows.map((r) => [r.id, r.kind, r.amountCents, r.reference]),
      [[reserved.entries[0]?.ledgerId, 'reserve', 4n, 'r1']],
    );

    const over = await refusalOf(
      t,
      run((tx) => reserveIn(tx, { charges: [{ account: a, amountCents: 7n }] }, now)),
    );
    t.like(over, {
      account: a,
      why: { reason: 'over_cap', remainingCents: 6n },
      message: 'delegation budget exceeded',
    });
    if (over !== undefined) {
      const e = spendRefusalError(over);
      t.like(e, { code: 'BCK.ROUTER.0003', httpStatus: 402, details: 'delegation budget exceeded' });
      t.deepEqual(e.params, { delegationId: a.id });
    }
    await run((tx) => reserveIn(tx, { charges: [{ account: a, amountCents: 6n }] }, now));
    t.like(
      await refusalOf(
        t,
        run((tx) => reserveIn(tx, { charges: [{ account: a, amountCents: 1n }] }, now)),
      ),
      {
        why: { reason: 'over_cap', remainingCents: 0n },
        message: 'delegation is exhausted',
      },
    );

    const cases: [Parameters<typeof delegationOf>[2], string, string][] = [
      [{ limit: 10n, status: 'Revoked' }, 'revoked', 'delegation is revoked'],
      [{ limit: 10n, expiresInMs: -HOUR }, 'expired', 'delegation is expired'],
    ];
    for (const [o, reason, message] of cases) {
      const d = await delegationOf(stack(), userId, o);
      t.like(
        await refusalOf(
          t,
          run((tx) => reserveIn(tx, { charges: [{ account: d, amountCents: 1n }] }, now)),
        ),
        {
          why: { reason },
          message,
        },
      );
      t.is(await spent(stack(), d.id), 0n);
    }
    // A status other than Active or Revoked is refused by the database itself (status-enums.test.ts); the
    // prediction from a row still calls it inactive rather than trusting it.
    t.like(
      predictDelegationRefusal(
        { status: 'Suspended', expiresAt: new Date(Date.now() + HOUR), spendingLimitCents: 10n, amountSpentCents: 0n },
        1n,
        now,
      ),
      { reason: 'inactive' },
    );
    // Another user's delegation is not found: a spend never crosses users.
    const foreign = delegationAccount(a.id, 'someone-else');
    t.like(
      await refusalOf(
        t,
        run((tx) => reserveIn(tx, { charges: [{ account: foreign, amountCents: 1n }] }, now)),
      ),
      {
        why: { reason: 'not_found' },
        message: 'delegation not found',
      },
    );
    await t.throwsAsync(
      run((tx) => reserveIn(tx, { charges: [{ account: a, amountCents: 0n }] }, now)),
      { instanceOf: RangeError },
      'a charge is positive',
    );
  });

  test('a refusal rolls back the charges before it (the caller lets it leave the transaction)', async (t) => {
    const { userId } = await stack().user();
    const now = new Date();
    // Ids chosen so `roomy` comes first in the lock order and is charged before `tight` refuses.
    const roomy = await delegationOf(stack(), userId, { limit: 100n, id: `0-${randomUUID()}` });
    const tight = await delegationOf(stack(), userId, { limit: 1n, id: `1-${randomUUID()}` });
    const log: string[] = [];
    const refused = await refusalOf(
      t,
      stack().ctx.db.sql.transaction((tx) =>
        reserveIn(
          counting(tx, log),
          {
            charges: [
              { account: tight, amountCents: 2n },
              { account: roomy, amountCents: 2n },
            ],
          },
          now,
        ),
      ),
    );
    t.is(refused?.account.id, tight.id);
    t.deepEqual(log.slice(0, 3), ['update', 'insert', 'update'], 'roomy (first in lock order) was charged first');
    t.is(await spent(stack(), roomy.id), 0n, 'rolled back with the transaction');
    t.deepEqual(await stack().ctx.db.em().find(DelegationTransaction, { delegationId: roomy.id }), []);
  });

  test('60 parallel spends naming two accounts in opposite orders: no deadlock, the smaller cap decides', async (t) => {
    const { userId } = await stack().user();
    const a = await delegationOf(stack(), userId, { limit: 1000n });
    const b = await delegationOf(stack(), userId, { limit: 25n });
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) => {
        const charges = [
          { account: a, amountCents: 1n },
          { account: b, amountCents: 1n },
        ];
        if (i % 2 === 1) charges.reverse();
        return stack().ctx.db.sql.transaction((tx) => reserveIn(tx, { charges, reference: `p${i}` }, new Date()));
      }),
    );
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    t.deepEqual(
      failures.filter((e) => !(e instanceof SpendRefused)).map(String),
      [],
      'only refusals (a deadlock would be a driver error)',
    );
    t.is(results.filter((r) => r.status === 'fulfilled').length, 25);
    t.true(failures.every((e) => e instanceof SpendRefused && e.account.id === b.id && e.why.reason === 'over_cap'));
    t.is(await spent(stack(), a.id), 25n);
    t.is(await spent(stack(), b.id), 25n);
    t.is(await stack().ctx.db.em().count(DelegationTransaction, { delegationId: a.id }), 25);
  });

  test('release: given back once per charge, never below zero, journalled negative', async (t) => {
    const { userId } = await stack().user();
    const now = new Date();
    const a = await delegationOf(stack(), userId, { limit: 10n, spent: 5n, status: 'Revoked' });
    const run = <T>(work: (tx: SqlTx) => Promise<T>) => stack().ctx.db.sql.transaction(work);
    // A revoked delegation still gets back what it was charged for nothing.
    t.true(await run((tx) => releaseIn(tx, { charges: [{ account: a, amountCents: 3n }], reference: 'x' }, now)));
    t.false(await run((tx) => releaseIn(tx, { charges: [{ account: a, amountCents: 3n }] }, now)));
    t.is(await spent(stack(), a.id), 2n);
    const rows = await stack().ctx.db.em().find(DelegationTransaction, { delegationId: a.id });
    t.deepEqual(
      rows.map((r) => [r.kind, r.amountCents, r.reference]),
      [['release', -3n, 'x']],
    );
    // Another user's release touches nothing.
    t.false(
      await run((tx) =>
        releaseIn(tx, { charges: [{ account: delegationAccount(a.id, 'someone-else'), amountCents: 1n }] }, now),
      ),
    );
    t.is(await spent(stack(), a.id), 2n);
  });
});
