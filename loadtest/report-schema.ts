// The figures of a load run, as written to its JSON file and rendered into its page (report.ts, report-html.ts).
import { z } from 'zod';
import { SCENARIOS } from './scenarios.js';

const ms = z.number().nonnegative();
const count = z.number().int().nonnegative();
const bin = z.object({ from: ms, to: ms, count });

export const LoadReportSchema = z.object({
  scenario: z.enum(SCENARIOS),
  description: z.string(),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
  settings: z.object({
    durationSeconds: z.number().int().positive(),
    connections: z.number().int().positive(),
    db: z.enum(['sqlite', 'postgresql']),
    /** host:port of each process of the run (no scheme: the page links nothing). */
    endpoints: z.object({ proxy: z.string(), admin: z.string(), upstream: z.string(), merchant: z.string() }),
  }),
  /** Stopped early by Ctrl-C. */
  interrupted: z.boolean(),
  summary: z.object({
    seconds: z.number().nonnegative(),
    requests: count,
    ok: count,
    failed: count,
    /** Successful calls per second. */
    rate: z.number().nonnegative(),
    /** Milliseconds, over the successful calls; null when there were none. */
    latency: z.object({ min: ms, mean: ms, p50: ms, p90: ms, p99: ms, max: ms }).nullable(),
  }),
  perSecond: z.array(z.object({ second: count, ok: count, failed: count, p50: ms.nullable(), p99: ms.nullable() })),
  histogram: z.object({ bins: z.array(bin), overflow: bin.nullable() }),
  errors: z.array(z.object({ message: z.string(), count })),
  /** No failed check and at least one success. */
  passed: z.boolean(),
});

export type LoadReport = z.infer<typeof LoadReportSchema>;
