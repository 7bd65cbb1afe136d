// GET /router/payments/summary: the number of payments per UTC day, week or month.
import type { ServiceContext } from '../context.js';
import type { PaymentOwner } from './principal.js';
import { DAY_MS, dailyPaymentCounts } from './payment-store.js';

export type Granularity = 'day' | 'week' | 'month';

/** Start of the UTC bucket holding `d`: days, ISO weeks starting Monday, calendar months. */
export function bucketStart(d: Date, g: Granularity): string {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (g === 'month') return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
  const day = new Date(Date.UTC(y, m, d.getUTCDate()));
  if (g === 'week') day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString().slice(0, 10);
}

/**
 * GET /router/payments/summary: number of payments per UTC bucket. The database counts per UTC day (one row per
 * day with payments, whatever their number); days are folded into weeks or months here.
 */
export async function paymentsSummary(
  ctx: ServiceContext,
  owner: PaymentOwner,
  q: { granularity: Granularity; delegationId?: string | undefined; from?: Date | undefined; to?: Date | undefined },
): Promise<{ total: number; series: { date: string; value: number }[] }> {
  const rows = await dailyPaymentCounts(ctx, owner, q);
  const counts = new Map<string, number>();
  let total = 0;
  for (const r of rows) {
    const n = Number(r.n);
    const k = bucketStart(new Date(Number(r.d) * DAY_MS), q.granularity);
    counts.set(k, (counts.get(k) ?? 0) + n);
    total += n;
  }
  const series = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, value]) => ({ date, value }));
  return { total, series };
}
