// The one runner of the admin process's background jobs: each job every its interval, never two runs of a job at
// once (./periodic.ts), none keeping the process alive; stopped together on shutdown, after the requests.
import type { ServiceContext } from '../../shared/context.js';
import type { Logger } from '../../shared/log.js';
import type { ChainClient } from '../../shared/settlement/chain/client.js';
import { chainJob } from './chain.js';
import { checkpointJobs } from './checkpointer.js';
import { failedLegReleaseJob } from './failed-leg-release.js';
import { feeSweepJob } from './fee-sweep.js';
import { idempotencyPurgeJob } from './idempotency-purge.js';
import type { Job } from './job.js';
import { oauthPurgeJob } from './oauth-purge.js';
import { type StopPeriodic, startPeriodic } from './periodic.js';

/**
 * Every job of the admin process: the chain's only with the rpc backend (the chain decides what was paid), the
 * failed payments' release only with the ledger (where no chain can tell whether an authorization was used).
 */
export function adminJobs(ctx: ServiceContext, log: Logger, chain: ChainClient | undefined): Job[] {
  return [
    ...checkpointJobs(ctx.db, log),
    feeSweepJob(ctx, log),
    idempotencyPurgeJob(ctx, log),
    oauthPurgeJob(ctx, log),
    ...(chain === undefined ? [failedLegReleaseJob(ctx, log)] : [chainJob(ctx, chain, log)]),
  ];
}

/** Starts every job; the returned function stops them all and resolves once the runs in progress have finished
 *  (their transactions committed or rolled back), so the database can be closed after it. */
export function startJobs(jobs: readonly Job[]): StopPeriodic {
  const stops = jobs.map((job) => startPeriodic(job.intervalMs, () => job.run()));
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}
