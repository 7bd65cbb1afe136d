// 200 parallel reserves against a cap that fits exactly K, spread over two real processes sharing one
// database: exactly K succeed, and amountSpentCents is their sum.
import { spawn } from 'node:child_process';
import { Delegation, DelegationTransaction } from '../shared/db/entities/index.js';
import { forEachDb } from './support/matrix.js';

function worker(env: Record<string, string>, args: object): Promise<{ reserved: number; refused: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/reserve-worker.ts', JSON.stringify(args)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`worker exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}'));
    });
  });
}

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
