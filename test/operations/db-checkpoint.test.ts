// The WAL checkpointer (admin/jobs/checkpointer.ts): with the proxy's raised wal_autocheckpoint, committing
// connections leave the WAL alone and a PASSIVE checkpoint from the checkpointer copies it into the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { checkpointJobs } from '../../admin/jobs/checkpointer.js';
import { startJobs } from '../../admin/jobs/runner.js';
import { type Db, migrate, openDb } from '../../shared/db/orm.js';
import { createLogger } from '../../shared/log.js';
import { faucet } from '../../shared/settlement/token-ledger.js';
import type { ServiceContext } from '../../shared/context.js';

const dir = mkdtempSync(join(tmpdir(), 'payroute-wal-'));
const path = join(dir, 'db.sqlite');
const log = createLogger({ LOG_LEVEL: 'warn' }, 'test');
let writer: Db | undefined;
let checkpointer: Db | undefined;

test.before(async () => {
  writer = await openDb({ kind: 'sqlite', path } as never, { walAutocheckpointPages: 1_000_000 });
  await migrate(writer);
  checkpointer = await openDb({ kind: 'sqlite', path } as never);
});
test.after.always(async () => {
  await writer?.close();
  await checkpointer?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctxOf = (db: Db) => ({ db, now: () => new Date() }) as unknown as ServiceContext;
const addr = (i: number) => `0x${(0xabc00000 + i).toString(16).padStart(40, '0')}`;

test.serial('a raised wal_autocheckpoint leaves the WAL to the checkpointer, which copies all of it', async (t) => {
  if (writer === undefined || checkpointer === undefined) throw new Error('not started');
  for (let i = 0; i < 300; i++) await faucet(ctxOf(writer), addr(i), addr(0), 1n);
  const first = await checkpointer.checkpoint();
  t.truthy(first);
  t.true((first?.walFrames ?? 0) > 300, `the writer did not checkpoint itself (${first?.walFrames} frames)`);
  t.is(first?.checkpointed, first?.walFrames, 'PASSIVE with no reader in the way: every frame copied');
});

test.serial('startCheckpointer runs PASSIVE checkpoints on a timer until stopped', async (t) => {
  const db = checkpointer;
  if (writer === undefined || db === undefined) throw new Error('not started');
  const results: { walFrames: number; checkpointed: number }[] = [];
  const spied: Db = {
    ...db,
    checkpoint: async () => {
      const r = await db.checkpoint();
      if (r !== undefined) results.push(r);
      return r;
    },
  };
  const stop = startJobs(checkpointJobs(spied, log, 50));
  try {
    for (let i = 0; i < 50; i++) await faucet(ctxOf(writer), addr(1000 + i), addr(0), 1n);
    await new Promise((r) => setTimeout(r, 400));
  } finally {
    stop();
  }
  t.true(results.length >= 3, `${results.length} checkpoints`);
  t.true(
    results.some((r) => r.checkpointed > 0),
    'the timer copied the new frames',
  );
  const seen = results.length;
  await new Promise((r) => setTimeout(r, 200));
  t.is(results.length, seen, 'stopped');
});
