// Hits and misses of the in-process caches (and of the Idempotency-Key answers), by cache name (labels.ts).
import { Counter } from 'prom-client';
import { CACHE_NAMES, type CacheName, bounded } from './labels.js';
import { PREFIX, collectors } from './collectors.js';

const lookups = new Counter({
  name: `${PREFIX}cache_lookups_total`,
  help: 'Cache lookups by cache name and result (hit: answered from memory or from a stored answer; miss).',
  labelNames: ['cache', 'result'] as const,
  registers: [collectors],
});

/** Counts a lookup as a hit when it found a value; returns the value, so the hook wraps the lookup in place. */
export function cacheLookup<V>(cache: CacheName, value: V | undefined): V | undefined {
  lookups.inc({ cache: bounded(CACHE_NAMES, cache), result: value === undefined ? 'miss' : 'hit' });
  return value;
}

export function countCacheLookup(cache: CacheName, hit: boolean): void {
  lookups.inc({ cache: bounded(CACHE_NAMES, cache), result: hit ? 'hit' : 'miss' });
}
