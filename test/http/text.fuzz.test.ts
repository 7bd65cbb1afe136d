// The boundary's string schemas (shared/text.ts), in process: a string is accepted exactly when it holds no
// character its family refuses and fits its bound, whatever else it holds; and every refusal is the 400 envelope
// naming the field. FUZZ_RUNS (default 1,000; 10,000 in `npm run test:fuzz`).
import test from 'ava';
import fc from 'fast-check';
import { z } from 'zod';
import { parse } from '../../admin/http/validate.js';
import { AppError } from '../../shared/errors/app-error.js';
import { isMultiLine, isSingleLine, line, text, wholeNumber } from '../../shared/text.js';

const numRuns = Number(process.env.FUZZ_RUNS ?? 1000);

/** Code units the families treat differently, mixed into ordinary text. */
const hostileUnit = fc.constantFrom(
  '\u0000',
  '\u0001',
  '\t',
  '\n',
  '\r',
  '\u000b',
  '\u001b',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u0085',
  '\u009b',
  '\u009f',
  '\u00a0',
  '\u200f',
  '\u202e',
  '\u2066',
  '\ufeff',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '?',
  "'",
  '"',
  '\\',
  '%00',
  'é',
);
const hostileString = fc
  .array(fc.oneof(hostileUnit, fc.string({ unit: 'binary', maxLength: 4 }), fc.string({ maxLength: 4 })), {
    maxLength: 12,
  })
  .map((parts) => parts.join(''));

/** zod bounds strings in code points (a lone surrogate is one), as PostgreSQL's varchar(n) counts characters. */
const codePoints = (s: string): number => [...s].length;

/** The reference: any C0/C1 control, DEL or lone surrogate, code unit by code unit. */
function refusedUnits(s: string, allowWhitespace: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (allowWhitespace && (c === 0x09 || c === 0x0a || c === 0x0d)) continue;
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

test('line() accepts a string exactly when it has no control character or lone surrogate and fits', (t) => {
  fc.assert(
    fc.property(hostileString, fc.integer({ min: 0, max: 40 }), (s, max) => {
      const ok = line(max).safeParse(s).success;
      const expected = !refusedUnits(s, false) && codePoints(s) <= max;
      return ok === expected && isSingleLine(s) === !refusedUnits(s, false);
    }),
    { numRuns },
  );
  t.pass();
});

test('text() also keeps TAB, LF and CR, and nothing else line() refuses', (t) => {
  fc.assert(
    fc.property(hostileString, fc.integer({ min: 0, max: 40 }), (s, max) => {
      const ok = text(max).safeParse(s).success;
      const expected = !refusedUnits(s, true) && codePoints(s) <= max;
      return ok === expected && isMultiLine(s) === !refusedUnits(s, true);
    }),
    { numRuns },
  );
  t.pass();
});

test('line({ trim }) checks the characters before trimming: a NUL or a line break at an end is refused', (t) => {
  const name = line(10, { trim: true }).min(1);
  t.is(name.parse('  Pro  '), 'Pro');
  t.false(name.safeParse('Pro\n').success);
  t.false(name.safeParse('\u0000Pro').success);
  t.false(name.safeParse('   ').success);
  t.is(name.parse(`  ${'a'.repeat(10)}  `), 'a'.repeat(10), 'the bound applies to the trimmed value');
});

test('a refusal is the 400 envelope naming the path and the reason', (t) => {
  const schema = z.object({ name: line(20), description: text(20) });
  const cases: [unknown, string][] = [
    [{ name: 'a\u0000b', description: '' }, 'body.name: must not contain control characters'],
    [{ name: 'a\u0085b', description: '' }, 'body.name: must not contain control characters'],
    [{ name: 'a\ud800', description: '' }, 'body.name: must be well-formed Unicode (no unpaired surrogates)'],
    [
      { name: 'a', description: 'x\u001b[2J' },
      'body.description: must not contain control characters other than tab and line breaks',
    ],
  ];
  for (const [body, message] of cases) {
    const err = t.throws(() => parse(schema, body), { instanceOf: AppError });
    t.is(err?.code, 'BCK.HTTP.0400');
    t.is(err?.message, message);
  }
  t.deepEqual(parse(schema, { name: 'a\u200fb', description: 'one\r\ntwo\tthree' }), {
    name: 'a\u200fb',
    description: 'one\r\ntwo\tthree',
  });
});

test('wholeNumber() reads decimal digits only: no whitespace or controls Number() would trim, no other notation', (t) => {
  const page = wholeNumber(1, 1_000_000);
  fc.assert(
    fc.property(fc.oneof(hostileString, fc.integer({ min: -5, max: 2_000_000 }).map(String)), (s) => {
      const r = page.safeParse(s);
      const expected = /^[0-9]{1,7}$/.test(s) && Number(s) >= 1 && Number(s) <= 1_000_000;
      return r.success === expected && (!r.success || r.data === Number(s));
    }),
    { numRuns },
  );
  for (const bad of ['\u000b1', ' 1', '1 ', '1\u0000', '0x10', '1e3', '5.0', '+5', '', '0', '1000001', '00000001'])
    t.false(page.safeParse(bad).success, JSON.stringify(bad));
  t.is(page.parse('0000001'), 1);
});
