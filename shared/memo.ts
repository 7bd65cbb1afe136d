// Memoisation for pure functions asked the same few questions on hot paths (header names, target URLs). Bounded
// so hostile inputs cannot grow it: when full it is emptied, which is cheaper than LRU bookkeeping on every hit
// and costs only recomputation. Keys longer than `maxKeyLength` are computed every time and never stored.
export function boundedMemo<V>(
  compute: (key: string) => V,
  opts: { max: number; maxKeyLength: number },
): (key: string) => V {
  const memo = new Map<string, V>();
  return (key) => {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const value = compute(key);
    if (key.length <= opts.maxKeyLength) {
      if (memo.size >= opts.max) memo.clear();
      memo.set(key, value);
    }
    return value;
  };
}
