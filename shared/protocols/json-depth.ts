// How deeply a JSON value nests, checked without recursion. JSON.parse accepts thousands of levels (it is
// iterative in V8), but JSON.stringify, zod and every other recursive walk overflow the stack at about 4,000
// levels and throw RangeError: a merchant's `extensions: {x: [[[...]]]}` (11.6 KB of base64 in PAYMENT-REQUIRED)
// became a 500 when the v2 credential echoed it. Untrusted JSON is therefore refused at the boundary where it
// enters a protocol decoder, before anything recursive touches it.
//
// MAX_JSON_DEPTH = 64: the deepest legitimate payment offer we know of is an x402 v2 `bazaar` discovery extension
// carrying a JSON Schema of the resource's input and output (about 10-15 levels: extensions > bazaar > info >
// input > schema > properties > field > items > ...); 64 leaves four times that head-room while staying two orders
// of magnitude below the ~4,000 levels at which JSON.stringify overflows (the credential adds a few levels around
// the echoed values). (serde_json's default recursion limit is 128, for comparison.)

/** Deepest nesting accepted in untrusted protocol JSON: a scalar is depth 0, `[]` or `{}` depth 1. */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests containers (arrays or objects) more than `max` levels deep. Iterative (an explicit stack,
 * never the call stack), and it stops at the first container past `max`, so its cost is at most the number of
 * nodes of the value. Meant for JSON.parse output and request bodies, which are trees: a cyclic in-process object
 * is reported as too deep rather than walked forever.
 */
export function exceedsJsonDepth(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: { readonly node: object; readonly depth: number }[] = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const top = stack.pop();
    if (top === undefined) break;
    if (top.depth > max) return true;
    const children: readonly unknown[] = Array.isArray(top.node) ? top.node : Object.values(top.node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: top.depth + 1 });
    }
  }
  return false;
}
