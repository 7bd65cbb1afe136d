// Fee legs left reserved. A mode B payment's fee leg is settled or released when its answer is recorded
// (steps/record.ts finishPayment / finishFeeLeg). If that never happens (the recording failed on a database error after the
// merchant answered, or the proxy stopped mid-call), the leg would hold its share of the delegation's cap for
// ever. The admin process (admin/jobs/fee-sweep.ts) releases such legs once they are older than any paid call can last
// (ROUTER_FEE_SWEEP_AFTER_SECS): the fee is not collected, the buyer's cap gets it back. The merchant leg stands.
import type { ServiceContext } from '../context.js';
import { RouterPayment } from '../db/entities/index.js';
import { releaseFeeLegIn } from './cap-give-back.js';

/** Releases up to `max` fee legs reserved before `olderThan`; resolves with how many it released. */
export async function releaseStaleFeeLegs(ctx: ServiceContext, olderThan: Date, max = 100): Promise<number> {
  // The partial index router_payment_fee_reserved_index holds only reserved legs: no scan of the payments.
  const rows = await ctx.db
    .em()
    // Mode B payments only, never a `Pending` row: an earlier version wrote those as claims before reserving the
    // cap (payment-store.ts whereOf), so their fee was never charged and must not be given back.
    .find(
      RouterPayment,
      {
        feeStatus: 'reserved',
        createdAt: { $lt: olderThan },
        mode: { $in: ['route', 'proxy'] },
        status: { $ne: 'Pending' },
      },
      { fields: ['id', 'delegationId', 'userId', 'feeCents'], limit: max },
    );
  let released = 0;
  for (const r of rows) {
    // Released once: a leg its paid call resolved meanwhile is left alone.
    const leg = {
      paymentId: r.id,
      delegationId: r.delegationId,
      userId: r.userId,
      feeCents: r.feeCents,
      description: 'fee leg never resolved (swept)',
    };
    if (await ctx.db.sql.transaction((tx) => releaseFeeLegIn(tx, leg, ctx.now()))) released += 1;
  }
  return released;
}
