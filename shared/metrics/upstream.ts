// Outbound calls to merchants (shared/upstream): time until the merchant's answer began, by its status class.
import { Histogram } from 'prom-client';
import { statusClassLabel } from './labels.js';
import { PREFIX, collectors } from './collectors.js';

const latency = new Histogram({
  name: `${PREFIX}upstream_response_seconds`,
  help:
    "Time from sending a call to a merchant to its answer's headers (or its failure), by status class " +
    '(1xx-5xx; failed: no answer; refused: our limits refused the answer).',
  labelNames: ['status_class'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [collectors],
});

/** The result of one exchange, timed from now (the call was just dispatched) to when it is known. */
export function timedUpstream<R extends { type: 'response'; status: number } | { type: 'refused' | 'failed' }>(
  result: Promise<R>,
): Promise<R> {
  const end = latency.startTimer();
  return result.then((r) => {
    end({ status_class: r.type === 'response' ? statusClassLabel(r.status) : r.type });
    return r;
  });
}
