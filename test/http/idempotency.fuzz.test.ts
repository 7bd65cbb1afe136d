// Property tests of the Idempotency-Key header parser and the request fingerprint (shared/idempotency): every key
// a client sends goes through the parser, and the fingerprint decides whether a retry is "the same request".
// FUZZ_RUNS (default 1000) sets the runs per property.
import test from 'ava';
import fc from 'fast-check';
import { canonicalBody, fingerprint } from '../../shared/idempotency/fingerprint.js';
import { IdempotencyKey } from '../../shared/idempotency/key.js';

const runs = Number(process.env.FUZZ_RUNS ?? 1000);
const opts = { numRuns: runs };

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });

test('a key is accepted exactly when it is 1 to 255 printable ASCII characters, and kept as sent', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(printable, fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ maxLength: 300 })),
      (s) => {
        const expected = s.length >= 1 && s.length <= 255 && /^[\x20-\x7e]*$/.test(s);
        const r = IdempotencyKey.safeParse(s);
        if (r.success !== expected) return false;
        return !r.success || r.data === s;
      },
    ),
    opts,
  );
  t.pass();
});

test('keys of every length at the bounds', (t) => {
  t.false(IdempotencyKey.safeParse('').success);
  t.true(IdempotencyKey.safeParse('a').success);
  t.true(IdempotencyKey.safeParse('~'.repeat(255)).success);
  t.false(IdempotencyKey.safeParse('~'.repeat(256)).success);
  for (const bad of ['\t', '\n', '\u007f', '\u0080', 'é', '\u{1F600}', 'a\u0000b']) {
    t.false(IdempotencyKey.safeParse(bad).success, JSON.stringify(bad));
  }
});

/** JSON values without numbers that JSON.stringify writes differently from how they parse (-0). */
const json = fc.jsonValue().filter((v) => !Object.is(v, -0));

/** The same value written with its object keys in a random order and random white space. */
function rewrite(v: unknown, order: number[], space: string): string {
  let i = 0;
  const walk = (x: unknown): string => {
    if (Array.isArray(x)) return `[${space}${x.map(walk).join(`,${space}`)}]`;
    if (typeof x === 'object' && x !== null) {
      const keys = Object.keys(x);
      const shift = (order[i++ % Math.max(order.length, 1)] ?? 0) % Math.max(keys.length, 1);
      const rotated = [...keys.slice(shift), ...keys.slice(0, shift)];
      const o = x as Record<string, unknown>;
      return `{${space}${rotated.map((k) => `${JSON.stringify(k)}${space}:${walk(o[k])}`).join(`,${space}`)}}`;
    }
    return JSON.stringify(x);
  };
  return walk(v);
}

test('the canonical body ignores key order and white space, and tells different values apart', (t) => {
  fc.assert(
    fc.property(json, fc.array(fc.nat(20)), fc.constantFrom('', ' ', '\n  '), (v, order, space) => {
      return canonicalBody(rewrite(v, order, space)) === canonicalBody(JSON.stringify(v));
    }),
    opts,
  );
  fc.assert(
    fc.property(json, json, (a, b) => {
      const same = canonicalBody(JSON.stringify(a)) === canonicalBody(JSON.stringify(b));
      return same === (JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b)));
    }),
    opts,
  );
  t.pass();
});

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

test('numbers keep their lexeme: bodies differing past 2^53 have different fingerprints', (t) => {
  const shape = { method: 'POST', route: '/r', params: {} };
  const a = fingerprint({ ...shape, rawBody: '{"amount":9007199254740993}' });
  const b = fingerprint({ ...shape, rawBody: '{"amount":9007199254740992}' });
  t.not(a, b);
  t.is(fingerprint({ ...shape, rawBody: '{ "amount" : 9007199254740993 }' }), a);
  // Path parameters, the route and the method are part of it.
  t.not(
    fingerprint({ ...shape, params: { planId: '1' }, rawBody: '' }),
    fingerprint({ ...shape, params: { planId: '2' }, rawBody: '' }),
  );
  t.not(fingerprint({ ...shape, rawBody: '' }), fingerprint({ ...shape, route: '/s', rawBody: '' }));
  // No body and an empty body are the same request; deep nesting is hashed as sent, never walked.
  t.is(fingerprint({ ...shape, rawBody: '' }), fingerprint({ ...shape, rawBody: '  ' }));
  const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
  t.is(canonicalBody(deep), `raw:${deep}`);
});
