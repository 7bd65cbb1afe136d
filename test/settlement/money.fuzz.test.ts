// Property tests of the money module (shared/money.ts), the parser every amount from the wire goes through.
// FUZZ_RUNS (default 1000; `npm run test:fuzz` uses 10,000) sets the runs per property.
import test from 'ava';
import fc from 'fast-check';
import {
  ATOMIC_PER_CENT,
  Amount,
  MAX_INT64,
  PositiveAmount,
  atomicToCentsCeil,
  centsToAtomic,
  feeFloor,
  fromColumn,
  sum,
  toWire,
} from '../../shared/money.js';

const runs = Number(process.env.FUZZ_RUNS ?? 1000);
const opts = { numRuns: runs };

/** The rule, written independently: canonical non-negative decimal (no sign, no leading zero) within int64. */
const canonical = (s: string): boolean => /^(0|[1-9][0-9]*)$/.test(s) && BigInt(s) <= MAX_INT64;

/** Strings near the boundary of the rule: digits with signs, spaces, exponents, separators, other digit scripts. */
const amountLike = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String),
  fc.bigInt({ min: MAX_INT64 - 1000n, max: MAX_INT64 + 1000n }).map(String),
  fc.stringMatching(/^[0-9]{1,25}$/),
  fc
    .tuple(
      fc.constantFrom('', '+', '-', ' ', '0', '00', '0x', '\t', '\u0661', '\uff11'),
      fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
      fc.constantFrom('', '.0', '.5', 'e3', 'E2', 'n', ' ', '\n', ',000', '_000', '\u0000', '0'),
    )
    .map(([a, b, c]) => `${a}${b}${c}`),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

test('Amount.safeParse never throws, whatever the input', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.anything(), amountLike, fc.double(), fc.bigInt()), (v) => {
      const r = Amount.safeParse(v);
      const p = PositiveAmount.safeParse(v);
      return typeof r.success === 'boolean' && typeof p.success === 'boolean';
    }),
    opts,
  );
  t.pass();
});

test('Amount accepts exactly the canonical decimal strings within int64, and they round-trip through toWire', (t) => {
  fc.assert(
    fc.property(amountLike, (s) => {
      const r = Amount.safeParse(s);
      if (r.success !== canonical(s)) return false;
      return !r.success || (r.data === BigInt(s) && toWire(r.data) === s);
    }),
    opts,
  );
  for (const ok of ['0', '1', '1000000', MAX_INT64.toString()]) t.true(Amount.safeParse(ok).success, ok);
  for (const bad of [
    '',
    '-0',
    '-1',
    '01',
    '1.0',
    '1.5',
    '1e6',
    ' 1',
    '1 ',
    '+1',
    'abc',
    '0x10',
    (MAX_INT64 + 1n).toString(),
  ]) {
    t.false(Amount.safeParse(bad).success, JSON.stringify(bad));
  }
});

test('Amount accepts exactly the safe non-negative integers among numbers', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: -1000, max: 1_000_000 }),
        fc.maxSafeInteger(),
        fc.double(),
        fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 2 ** 63, -0, Number.NaN, Infinity),
      ),
      (n) => {
        const r = Amount.safeParse(n);
        const expected = Number.isSafeInteger(n) && n >= 0;
        if (r.success !== expected) return false;
        return !r.success || (r.data === BigInt(n) && toWire(r.data) === String(n));
      },
    ),
    opts,
  );
  t.pass();
});

test('every int64 value survives toWire -> Amount; anything above MAX_INT64 is refused', (t) => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: MAX_INT64 }), (b) => Amount.parse(toWire(b)) === b),
    opts,
  );
  fc.assert(
    fc.property(fc.bigInt({ min: MAX_INT64 + 1n, max: 2n ** 80n }), (b) => !Amount.safeParse(toWire(b)).success),
    opts,
  );
  t.false(Amount.safeParse(9_223_372_036_854_775_807n).success, 'a bigint value is not a JSON input');
});

test('other JSON types are refused; PositiveAmount is Amount without 0', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(fc.boolean(), fc.constant(null), fc.array(fc.nat()), fc.object(), fc.constant(undefined)),
      (v) => !Amount.safeParse(v).success,
    ),
    opts,
  );
  fc.assert(
    fc.property(fc.oneof(amountLike, fc.integer({ min: -5, max: 5 })), (v) => {
      const a = Amount.safeParse(v);
      const p = PositiveAmount.safeParse(v);
      return p.success === (a.success && a.data > 0n) && (!p.success || p.data === (a.success ? a.data : -1n));
    }),
    opts,
  );
  t.false(PositiveAmount.safeParse('0').success);
  t.false(PositiveAmount.safeParse(0).success);
});

test('atomicToCentsCeil is the exact ceiling: ceil*10000 >= x > (ceil-1)*10000, and never undercharges', (t) => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: MAX_INT64 }), (x) => {
      const c = atomicToCentsCeil(x);
      return c >= 0n && c * ATOMIC_PER_CENT >= x && (c - 1n) * ATOMIC_PER_CENT < x && centsToAtomic(c) >= x;
    }),
    opts,
  );
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: MAX_INT64 - 1n }), (x) => atomicToCentsCeil(x) <= atomicToCentsCeil(x + 1n)),
    opts,
  );
  t.is(atomicToCentsCeil(0n), 0n);
  t.is(atomicToCentsCeil(1n), 1n);
  t.is(atomicToCentsCeil(10_000n), 1n);
  t.is(atomicToCentsCeil(10_001n), 2n);
  t.is(centsToAtomic(atomicToCentsCeil(1_000_000n)), 1_000_000n, 'whole cents are exact');
});

test('feeFloor is the exact floor of amount*bps/10000: fee <= amount*bps/10000 < fee+1, never above the amount', (t) => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: MAX_INT64 }), fc.bigInt({ min: 0n, max: 10_000n }), (amount, bps) => {
      const fee = feeFloor(amount, bps);
      const exact = amount * bps; // compared in units of 1/10000, no division involved
      return fee >= 0n && fee * 10_000n <= exact && exact < (fee + 1n) * 10_000n && fee <= amount;
    }),
    opts,
  );
  t.is(feeFloor(19n, 500n), 0n, 'a fee that floors to 0 is 0');
  t.is(feeFloor(1_000_000n, 500n), 50_000n);
  t.is(feeFloor(1_000_001n, 500n), 50_000n);
});

test('fromColumn returns a bigint or throws TypeError, never anything else', (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.anything(), fc.bigInt(), fc.double(), amountLike, fc.bigInt().map(String)), (v) => {
      try {
        const b = fromColumn(v);
        return typeof b === 'bigint';
      } catch (err) {
        return err instanceof TypeError;
      }
    }),
    opts,
  );
  fc.assert(
    fc.property(
      fc.bigInt({ min: -MAX_INT64 - 1n, max: MAX_INT64 }),
      (b) => fromColumn(b.toString()) === b && fromColumn(b) === b,
    ),
    opts,
  );
  t.throws(() => fromColumn(2 ** 60), { instanceOf: TypeError }, 'an unsafe number lost precision already');
  t.throws(() => fromColumn(1.5), { instanceOf: TypeError });
  t.is(sum([1n, 2n, 3n]), 6n);
  t.is(sum([]), 0n);
});
