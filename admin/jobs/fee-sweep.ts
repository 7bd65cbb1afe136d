// The fee sweep: every minute, releases the fee legs left reserved for longer than any paid call can last
// (ROUTER_FEE_SWEEP_AFTER_SECS; why, and the statements: shared/router/fee-sweep.ts).
import type { ServiceContext } from '../../shared/context.js';
import type { Logger } from '../../shared/log.js';
import { releaseStaleFeeLegs } from '../../shared/router/fee-sweep.js';
import { type Job, messageOf } from './job.js';

export function feeSweepJob(ctx: ServiceContext, log: Logger, intervalMs = 60_000): Job {
  const afterMs = ctx.config.ROUTER_FEE_SWEEP_AFTER_SECS * 1000;
  return {
    name: 'fee sweep',
    intervalMs,
    run: () =>
      releaseStaleFeeLegs(ctx, new Date(ctx.now().getTime() - afterMs))
        .then((n) => {
          if (n > 0) log.warn({ released: n }, 'released fee legs left reserved');
        })
        .catch((err: unknown) => log.warn({ err: messageOf(err) }, 'fee sweep failed')),
  };
}
