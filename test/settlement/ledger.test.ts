// The sandbox token ledger (shared/settlement/token-ledger.ts) as a storage contract, on SQLite and PostgreSQL:
// faucet credits, conditional debits, whole-transaction rollback on a shortfall, and a journal whose rows of
// each txId sum to zero. No processes: a ServiceContext on a fresh database per kind.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadConfig } from '../../config/index.js';
import { type ServiceContext, createContext } from '../../shared/context.js';
import { createLogger } from '../../shared/log.js';
import { emSql } from '../../shared/db/sql.js';
import { AppError } from '../../shared/errors/app-error.js';
import {
  FAUCET_ACCOUNT,
  InsufficientFunds,
  type Movement,
  applyMovements,
  balanceOf,
  faucet,
} from '../../shared/settlement/token-ledger.js';
import { DB_KINDS, type TestDatabase, createTestDatabase, postgresAvailable } from '../support/databases.js';

const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const EURC = '0x808456652fdb597867f38412077A9182bf77359F';
let n = 0;
const addr = () => {
  n += 1;
  return `0x${(0xfeed0000 + n).toString(16).padStart(40, '0')}`;
};

const pgAvailable = await postgresAvailable();

for (const kind of DB_KINDS) {
  const available = kind === 'sqlite' || pgAvailable;
  const register = available ? test : test.skip;
  let db: TestDatabase | undefined;
  let ctx: ServiceContext | undefined;
  let dataDir: string | undefined;
  if (available) {
    test.before(async () => {
      db = await createTestDatabase(kind);
      dataDir = mkdtempSync(join(tmpdir(), 'payroute-ledger-'));
      const config = loadConfig({
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        SECRETS_KEY: randomBytes(32).toString('hex'),
      });
      ctx = await createContext(config, createLogger({ LOG_LEVEL: 'warn' }, 'test'), { migrate: true });
    });
    test.after.always(async () => {
      await ctx?.db.close();
      await db?.drop();
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    });
  }
  const c = (): ServiceContext => {
    if (ctx === undefined) throw new Error('context not started');
    return ctx;
  };
  const journal = async (where: string, params: unknown[]) =>
    (await c()
      .db.em()
      .execute(
        `select address, asset, cast(delta as text) as delta, kind, reference, tx_id from token_ledger where ${where}`,
        params,
      )) as {
      address: string;
      asset: string;
      delta: string;
      kind: string;
      reference: string | null;
      tx_id: string;
    }[];
  const sumOf = (rows: { delta: string }[]) => rows.reduce((a, r) => a + BigInt(r.delta), 0n);

  register(`[${kind}] faucet credits an address per asset and journals against the faucet account`, async (t) => {
    const a = addr();
    const first = await faucet(c(), a, ASSET, 1_000_000n);
    t.is(first.balance, 1_000_000n);
    const second = await faucet(c(), a, ASSET, 234n);
    t.is(second.balance, 1_000_234n);
    t.is(await balanceOf(c(), a, EURC), 0n, 'assets are separate');
    t.not(first.txId, second.txId);
    for (const txId of [first.txId, second.txId]) {
      const rows = await journal('tx_id = ?', [txId]);
      t.is(rows.length, 2);
      t.is(sumOf(rows), 0n);
      t.deepEqual(rows.map((r) => r.address).sort(), [a, FAUCET_ACCOUNT].sort());
      t.true(rows.every((r) => r.kind === 'faucet' && r.asset === ASSET));
    }
    t.is(sumOf(await journal('address = ? and asset = ?', [a, ASSET])), 1_000_234n, 'the journal explains the balance');
  });

  register(`[${kind}] applyMovements: debit and credit per movement, one txId, journal sums to zero`, async (t) => {
    const [payer, r1, r2] = [addr(), addr(), addr()];
    await faucet(c(), payer, ASSET, 1000n);
    const movements: Movement[] = [
      { from: payer, to: r1, asset: ASSET, amount: 600n, kind: 'order', reference: 'ref-1' },
      { from: payer, to: r2, asset: ASSET, amount: 400n, kind: 'order', reference: 'ref-1' },
      { from: payer, to: r2, asset: ASSET, amount: 0n, kind: 'order' },
    ];
    const txId = await c().db.sql.transaction((tx) => applyMovements(tx, movements, new Date()));
    t.is(await balanceOf(c(), payer, ASSET), 0n);
    t.is(await balanceOf(c(), r1, ASSET), 600n);
    t.is(await balanceOf(c(), r2, ASSET), 400n);
    const rows = await journal('tx_id = ?', [txId]);
    t.is(rows.length, 4, 'zero-amount movements are skipped');
    t.is(sumOf(rows), 0n);
    t.true(rows.every((r) => r.reference === 'ref-1'));
  });

  register(`[${kind}] a shortfall in any movement rolls back the whole transaction`, async (t) => {
    const [payer, r1, r2] = [addr(), addr(), addr()];
    await faucet(c(), payer, ASSET, 1000n);
    const err = await t.throwsAsync(
      // Inside a MikroORM transaction (admin flows that mix entity writes and movements) through emSql.
      c()
        .db.em()
        .transactional((tx) =>
          applyMovements(
            emSql(tx, c().db.dialect),
            [
              { from: payer, to: r1, asset: ASSET, amount: 700n, kind: 'order' },
              { from: payer, to: r2, asset: ASSET, amount: 301n, kind: 'order' },
            ],
            new Date(),
          ),
        ),
    );
    t.true(err instanceof InsufficientFunds);
    t.is((err as InsufficientFunds).address, payer);
    t.is(await balanceOf(c(), payer, ASSET), 1000n);
    t.is(await balanceOf(c(), r1, ASSET), 0n);
    t.is((await journal('address in (?, ?)', [r1, r2])).length, 0);
    // An address that never held the asset cannot pay at all.
    await t.throwsAsync(
      c().db.sql.transaction((tx) =>
        applyMovements(tx, [{ from: addr(), to: r1, asset: ASSET, amount: 1n, kind: 'x' }], new Date()),
      ),
      { instanceOf: InsufficientFunds },
    );
    // Nor with another asset's balance.
    await t.throwsAsync(
      c().db.sql.transaction((tx) =>
        applyMovements(tx, [{ from: payer, to: r1, asset: EURC, amount: 1n, kind: 'x' }], new Date()),
      ),
      { instanceOf: InsufficientFunds },
    );
    // Nor to itself: a self-transfer nets to zero but still needs the balance (it would revert on chain).
    const self = (amount: bigint) => [
      { from: payer, to: payer, asset: ASSET, amount, kind: 'self', reference: `self-${amount}` },
    ];
    await t.throwsAsync(
      c().db.sql.transaction((tx) => applyMovements(tx, self(1001n), new Date())),
      { instanceOf: InsufficientFunds },
    );
    const empty = addr();
    await t.throwsAsync(
      c().db.sql.transaction((tx) =>
        applyMovements(tx, [{ from: empty, to: empty, asset: ASSET, amount: 1n, kind: 'self' }], new Date()),
      ),
      { instanceOf: InsufficientFunds },
    );
    await c().db.sql.transaction((tx) => applyMovements(tx, self(1000n), new Date()));
    t.is(await balanceOf(c(), payer, ASSET), 1000n);
    t.deepEqual((await journal('reference = ?', ['self-1000'])).map((r) => r.delta).sort(), ['-1000', '1000']);
  });

  register(
    `[${kind}] a self-payment with a fee leg beside payments the other way: no deadlock (locks in address order)`,
    async (t) => {
      // F sorts before A: the self-payment's balance check on A used to lock A before F, while F -> A locks F, then A.
      const F = `0x0000${addr().slice(6)}`;
      const A = `0xffff${addr().slice(6)}`;
      await faucet(c(), A, ASSET, 1_000_000n);
      await faucet(c(), F, ASSET, 1_000_000n);
      const selfWithFee = [
        { from: A, to: A, asset: ASSET, amount: 10n, kind: 'router' },
        { from: A, to: F, asset: ASSET, amount: 1n, kind: 'router_fee' },
      ];
      const back = [{ from: F, to: A, asset: ASSET, amount: 1n, kind: 'x' }];
      const results = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) =>
          c().db.sql.transaction((tx) => applyMovements(tx, i % 2 === 0 ? selfWithFee : back, new Date())),
        ),
      );
      t.deepEqual(
        results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
        [],
      );
      t.is(await balanceOf(c(), A, ASSET), 1_000_000n);
      t.is(await balanceOf(c(), F, ASSET), 1_000_000n);
    },
  );

  register(`[${kind}] 50 parallel transfers from one wallet funding exactly 13: exactly 13 succeed`, async (t) => {
    const payer = addr();
    const to = addr();
    await faucet(c(), payer, ASSET, 13n * 77n + 76n);
    const results = await Promise.allSettled(
      // Half through the hot-path runner, half inside MikroORM transactions: both share one connection's lock.
      Array.from({ length: 50 }, (_, i) => {
        const m = [{ from: payer, to, asset: ASSET, amount: 77n, kind: 'order' }];
        return i % 2 === 0
          ? c().db.sql.transaction((tx) => applyMovements(tx, m, new Date()))
          : c()
              .db.em()
              .transactional((tx) => applyMovements(emSql(tx, c().db.dialect), m, new Date()));
      }),
    );
    t.is(results.filter((r) => r.status === 'fulfilled').length, 13);
    t.true(results.every((r) => r.status === 'fulfilled' || r.reason instanceof InsufficientFunds));
    t.is(await balanceOf(c(), payer, ASSET), 76n);
    t.is(await balanceOf(c(), to, ASSET), 13n * 77n);
    t.is(sumOf(await journal('address = ?', [payer])), 76n);
  });

  register(`[${kind}] amounts beyond 2^53 stay exact in balances and the journal`, async (t) => {
    const a = addr();
    const b = addr();
    const big = 2n ** 62n + 3n;
    await faucet(c(), a, ASSET, big);
    await c().db.sql.transaction((tx) =>
      applyMovements(tx, [{ from: a, to: b, asset: ASSET, amount: big - 1n, kind: 'x' }], new Date()),
    );
    const rows = (await c()
      .db.em()
      .execute('select address, cast(balance as text) as b from token_balance where address in (?, ?)', [a, b])) as {
      address: string;
      b: string;
    }[];
    t.deepEqual(Object.fromEntries(rows.map((r) => [r.address, r.b])), { [a]: '1', [b]: (big - 1n).toString() });
    t.is(sumOf(await journal('address = ?', [b])), big - 1n);
  });

  register(`[${kind}] a credit that would leave the 64-bit range is refused (400) and changes nothing`, async (t) => {
    const a = addr();
    const asset = addr(); // its own asset: the faucet's counter-balance in it starts at 0
    const max = 9_223_372_036_854_775_807n;
    await faucet(c(), a, asset, max - 5n);
    const err = await t.throwsAsync(faucet(c(), a, asset, 6n));
    t.true(err instanceof AppError);
    t.is((err as AppError).code, 'BCK.HTTP.0400');
    t.is(await balanceOf(c(), a, asset), max - 5n, 'no overflow to an error (PostgreSQL) or a float (SQLite)');
    t.is(sumOf(await journal('address = ?', [a])), max - 5n, 'the refused credit left no journal rows');
    await faucet(c(), a, asset, 5n);
    t.is(await balanceOf(c(), a, asset), max, 'up to the maximum is fine');
    // The faucet's counter-account goes negative by the same amounts; it stops at -(2^63 - 1) as well.
    t.is(await balanceOf(c(), FAUCET_ACCOUNT, asset), -max);
    await t.throwsAsync(faucet(c(), addr(), asset, 1n), { instanceOf: AppError });
    t.is(await balanceOf(c(), FAUCET_ACCOUNT, asset), -max);
  });
}
