// What a load run measured, as figures: every successful call's latency and when it completed, the failures by
// message, and the statistics the report and the live progress line show. Pure apart from the clock a Recorder is
// given, so the statistics are tested on fixed input.

/** Where a load loop reports each call (loadtest/load.ts). */
export interface Sink {
  ok(latencyMs: number): void;
  fail(error: string): void;
}

/**
 * The nearest-rank percentile (the smallest value with at least p% of the values at or below it) of values sorted
 * ascending; NaN for none.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[Math.min(n, rank) - 1] ?? Number.NaN;
}

export interface LatencySummary {
  readonly min: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/** Latency statistics of values sorted ascending (milliseconds); null for none. */
export function latencySummary(sorted: ArrayLike<number>): LatencySummary | null {
  const n = sorted.length;
  if (n === 0) return null;
  let sum = 0;
  for (let i = 0; i < n; i += 1) sum += sorted[i] ?? 0;
  return {
    min: sorted[0] ?? Number.NaN,
    mean: sum / n,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[n - 1] ?? Number.NaN,
  };
}

/** The smallest of 1, 2, 2.5, 5 times a power of ten that is at least `x` (an axis' end); 1 for x <= 0. */
export function niceCeil(x: number): number {
  if (!(x > 0)) return 1;
  const exp = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) {
    // The tolerance keeps a value a rounding error above a round one (2.5000000000000004) on that round one.
    if (m * exp >= x * (1 - 1e-9)) return m * exp;
  }
  return 10 * exp;
}

export interface Bin {
  readonly from: number;
  readonly to: number;
  readonly count: number;
}

export interface Histogram {
  /** Equal-width bins from 0 to a round upper bound; a value counts in the bin whose [from, to) holds it (the last
   * bin holds its end too). */
  readonly bins: Bin[];
  /** The values above the last bin's end (from it to the maximum); null when there are none. */
  readonly overflow: Bin | null;
}

/**
 * A latency histogram of values sorted ascending: at most `maxBins` bins of a round width from 0 to the first edge at
 * or above the maximum, or above the 99th percentile when the maximum is more than four times it (a few stragglers
 * would squash the shape into one bar); what lies beyond goes to `overflow`.
 */
export function histogram(sorted: ArrayLike<number>, maxBins = 20): Histogram {
  const n = sorted.length;
  if (n === 0) return { bins: [], overflow: null };
  const max = sorted[n - 1] ?? 0;
  const p99 = percentile(sorted, 99);
  const reach = max > 4 * p99 ? p99 : max;
  // A round bin width, so that every bin edge is a round number too.
  const width = niceCeil(reach / maxBins);
  const binCount = Math.max(1, Math.min(maxBins, Math.ceil(reach / width - 1e-9)));
  const upper = width * binCount;
  const counts = new Array<number>(binCount).fill(0);
  let over = 0;
  for (let i = 0; i < n; i += 1) {
    const v = sorted[i] ?? 0;
    if (v > upper) over += 1;
    else {
      const b = Math.min(binCount - 1, Math.floor(v / width));
      counts[b] = (counts[b] ?? 0) + 1;
    }
  }
  return {
    bins: counts.map((count, i) => ({ from: round(i * width), to: round((i + 1) * width), count })),
    overflow: over > 0 ? { from: round(upper), to: round(max), count: over } : null,
  };
}

/** To the microsecond, for milliseconds: what the JSON keeps. */
export function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

export interface SecondFigures {
  /** Seconds since the start of the load: this bucket covers [second, second + 1). */
  readonly second: number;
  readonly ok: number;
  readonly failed: number;
  readonly p50: number | null;
  readonly p99: number | null;
}

export interface RunFigures {
  readonly seconds: number;
  readonly ok: number;
  readonly failed: number;
  /** Successful calls per second over the whole run. */
  readonly rate: number;
  readonly latency: LatencySummary | null;
  readonly perSecond: SecondFigures[];
  readonly histogram: Histogram;
  /** Distinct failure messages, most frequent first. */
  readonly errors: { message: string; count: number }[];
}

export interface WindowFigures {
  readonly elapsedSeconds: number;
  readonly ok: number;
  readonly failed: number;
  /** Successful calls per second in the window. */
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
}

/** At most this many distinct failure messages are kept (each counted); later new ones count under the last. */
const MAX_ERROR_KINDS = 20;

/**
 * Collects a run's calls as they complete. Latencies are appended in completion order, so each second's calls are a
 * contiguous slice of them: per-second percentiles need no second copy. They are kept as 32-bit floats (a tenth of a
 * microsecond on a one-second latency), so an hour of relays at 20,000 a second stays under 300 MB.
 */
export class Recorder implements Sink {
  private latencies = new Float32Array(1 << 14);
  private n = 0;
  private failures = 0;
  /** Per second since the start: successful and failed calls, and where its latencies start. */
  private readonly buckets: { ok: number; failed: number; from: number }[] = [];
  private readonly errorCounts = new Map<string, number>();
  private windowStart: { at: number; n: number; failed: number };

  constructor(
    private readonly clock: () => number = () => performance.now(),
    private readonly t0: number = clock(),
  ) {
    this.windowStart = { at: t0, n: 0, failed: 0 };
  }

  ok(latencyMs: number): void {
    // The bucket first: a new second's slice of latencies starts at this call.
    const bucket = this.bucket();
    if (this.n === this.latencies.length) {
      const grown = new Float32Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.n] = latencyMs;
    this.n += 1;
    bucket.ok += 1;
  }

  fail(error: string): void {
    this.failures += 1;
    this.bucket().failed += 1;
    let message = error.slice(0, 300);
    if (!this.errorCounts.has(message) && this.errorCounts.size >= MAX_ERROR_KINDS) message = '(other errors)';
    this.errorCounts.set(message, (this.errorCounts.get(message) ?? 0) + 1);
  }

  get done(): number {
    return this.n + this.failures;
  }

  get failed(): number {
    return this.failures;
  }

  /** What happened since the previous call (or the start): for the live progress line. */
  window(): WindowFigures {
    const now = this.clock();
    const slice = this.latencies.slice(this.windowStart.n, this.n).sort();
    const seconds = (now - this.windowStart.at) / 1000;
    const w: WindowFigures = {
      elapsedSeconds: (now - this.t0) / 1000,
      ok: slice.length,
      failed: this.failures - this.windowStart.failed,
      rate: seconds > 0 ? slice.length / seconds : 0,
      p50: percentile(slice, 50),
      p99: percentile(slice, 99),
    };
    this.windowStart = { at: now, n: this.n, failed: this.failures };
    return w;
  }

  /** The run's figures, its duration counted up to now. */
  finish(): RunFigures {
    const seconds = (this.clock() - this.t0) / 1000;
    const perSecond = this.buckets.map((b, i): SecondFigures => {
      const slice = this.latencies.slice(b.from, this.buckets[i + 1]?.from ?? this.n).sort();
      const p = (q: number) => (slice.length === 0 ? null : round(percentile(slice, q)));
      return { second: i, ok: b.ok, failed: b.failed, p50: p(50), p99: p(99) };
    });
    const sorted = this.latencies.slice(0, this.n).sort();
    const summary = latencySummary(sorted);
    return {
      seconds,
      ok: this.n,
      failed: this.failures,
      rate: seconds > 0 ? this.n / seconds : 0,
      latency:
        summary === null
          ? null
          : {
              min: round(summary.min),
              mean: round(summary.mean),
              p50: round(summary.p50),
              p90: round(summary.p90),
              p99: round(summary.p99),
              max: round(summary.max),
            },
      perSecond,
      histogram: histogram(sorted),
      errors: [...this.errorCounts]
        .map(([message, count]) => ({ message, count }))
        .sort((a, b) => b.count - a.count || a.message.localeCompare(b.message)),
    };
  }

  private bucket(): { ok: number; failed: number; from: number } {
    const second = Math.max(0, Math.floor((this.clock() - this.t0) / 1000));
    while (this.buckets.length <= second) this.buckets.push({ ok: 0, failed: 0, from: this.n });
    return this.buckets[second] as { ok: number; failed: number; from: number };
  }
}
