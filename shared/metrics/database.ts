// The money hot paths' transactions (shared/db/sql.ts): their latency as the caller sees it (on SQLite that
// includes the wait for the group commit it joins), and how many transactions each SQLite group commit carried.
import { Histogram } from 'prom-client';
import { PREFIX, collectors } from './collectors.js';

const latency = new Histogram({
  name: `${PREFIX}db_transaction_duration_seconds`,
  help: 'Time from a hot-path transaction being asked for to its commit or rollback, by dialect and outcome.',
  labelNames: ['dialect', 'outcome'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [collectors],
});

const batch = new Histogram({
  name: `${PREFIX}db_group_commit_size`,
  help: 'Transactions committed together by one SQLite group commit (one COMMIT, one WAL sync).',
  // Powers of two up to the group's limit (MAX_GROUP in sql.ts).
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  registers: [collectors],
});

/** One transaction, timed from now to its end; `dialect` is the runner's own (a closed set). */
export function timedTransaction<T>(dialect: 'sqlite' | 'postgresql', transaction: Promise<T>): Promise<T> {
  const end = latency.startTimer({ dialect });
  transaction.then(
    () => end({ outcome: 'commit' }),
    () => end({ outcome: 'rollback' }),
  );
  return transaction;
}

export function observeGroupCommit(size: number): void {
  batch.observe(size);
}
