// 200 parallel reserves against a cap that fits exactly K, spread over two real processes sharing one
// database: exactly K succeed, and amountSpentCents is their sum.
import { Delegation, DelegationTransaction } from '../../shared/db/entities/index.js';
import { runWorker } from '../support/cli.js';
import { forEachDb } from '../support/matrix.js';

const worker = (env: Record<string, string>, args: object) =>
  runWorker<{ reserved: number; refused: number }>('test/support/reserve-worker.ts', args, env);

forEachDb(({ stack, test }) => {
  test('200 reserves over two processes against a cap for exactly K', async (t) => {
    const u = await stack().user();
    const K = 37;
    const amount = 3n;
    const { body } = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: String(BigInt(K) * amount + 2n),
      durationSecs: 600,
    });
    const args = { delegationId: body.delegationId, userId: u.userId, count: 100, amountCents: amount.toString() };
    const [a, b] = await Promise.all([worker(stack().env, args), worker(stack().env, args)]);
    t.is(a.reserved + b.reserved, K);
    t.is(a.refused + b.refused, 200 - K);
    const d = await stack().ctx.db.em().findOneOrFail(Delegation, { id: body.delegationId });
    t.is(d.amountSpentCents, BigInt(K) * amount);
    t.is(d.transactionCount, K);
    const rows = await stack().ctx.db.em().find(DelegationTransaction, { delegationId: body.delegationId });
    t.is(rows.length, K);
    t.is(
      rows.reduce((s, r) => s + r.amountCents, 0n),
      BigInt(K) * amount,
    );
  });

  test('a revocation through the API stops spends in another process', async (t) => {
    const u = await stack().user();
    const { body } = await u.api.post('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 100,
      durationSecs: 600,
    });
    const args = { delegationId: body.delegationId, userId: u.userId, count: 1, amountCents: '1' };
    t.is((await worker(stack().env, args)).reserved, 1);
    await u.api.del(`/delegation/${body.delegationId}`);
    t.deepEqual(await worker(stack().env, args), { reserved: 0, refused: 1 });
  });
});
