// The fee sweep: every minute, releases the fee legs left reserved for longer than any paid call can last
// (ROUTER_FEE_SWEEP_AFTER_SECS). A mode B payment's fee leg is settled or released when its answer is recorded
// (shared/router/steps/record.ts). If that never happens (the recording failed on a database error after the
// merchant answered, or the proxy stopped mid-call), the leg would hold its share of the delegation's cap for
// ever: the sweep gives it back. The fee is not collected; the merchant leg stands.
import type { ServiceContext } from '../../shared/context.js';
import type { Logger } from '../../shared/log.js';
import { releaseFeeLegIn } from '../../shared/router/cap-give-back.js';
import { staleFeeLegs } from '../../shared/router/payment-store.js';
import { type Job, messageOf } from './job.js';

/** Releases up to `max` fee legs reserved before `olderThan`; resolves with how many it released. */
export async function releaseStaleFeeLegs(ctx: ServiceContext, olderThan: Date, max = 100): Promise<number> {
  let released = 0;
  for (const r of await staleFeeLegs(ctx, olderThan, max)) {
    // Released once: a leg its paid call resolved meanwhile is left alone.
    const leg = { paymentId: r.id, ...r, description: 'fee leg never resolved (swept)' };
    if (await ctx.db.sql.transaction((tx) => releaseFeeLegIn(tx, leg, ctx.now()))) released += 1;
  }
  return released;
}

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
