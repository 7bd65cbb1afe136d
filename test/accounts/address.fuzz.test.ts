// Property tests of the EVM address parser (shared/address.ts): every address from the wire or the CLI goes through
// it and is stored in its EIP-55 checksum form. FUZZ_RUNS (default 1000) sets the runs per property.
import test from 'ava';
import fc from 'fast-check';
import { keccak256, toBytes } from 'viem';
import { EvmAddress, normalizeAddress } from '../../shared/address.js';

const runs = Number(process.env.FUZZ_RUNS ?? 1000);
const opts = { numRuns: runs };

const HEX = /^0x[0-9a-fA-F]{40}$/;

/** EIP-55 written out independently of viem's getAddress: nibble i of keccak(lowercase hex) >= 8 -> uppercase. */
function eip55(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256(toBytes(lower)).slice(2);
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower[i] ?? '';
    out += Number.parseInt(hash[i] ?? '0', 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF'.split(''));
const validAddress = fc.string({ unit: hexChar, minLength: 40, maxLength: 40 }).map((h) => `0x${h}`);
/** Near misses: wrong length, prefix, a stray character, surrounding space, other scripts. */
const nearMiss = fc.oneof(
  fc.string({ unit: hexChar, minLength: 38, maxLength: 42 }).map((h) => `0x${h}`),
  validAddress.map((a) => a.replace('0x', '0X')),
  validAddress.map((a) => a.slice(2)),
  fc
    .tuple(
      validAddress,
      fc.nat({ max: 41 }),
      fc.constantFrom('g', 'G', ' ', '\n', '\u0000', 'x', '\u0661', '\uff10', 'é'),
    )
    .map(([a, i, c]) => a.slice(0, i) + c + a.slice(i + 1)),
  fc
    .tuple(fc.constantFrom(' ', '\n', '\t', ''), validAddress, fc.constantFrom(' ', '\n', '\t', '00'))
    .map(([a, b, c]) => `${a}${b}${c}`),
);
const anyInput = fc.oneof(fc.anything(), fc.string(), fc.string({ unit: 'binary' }), validAddress, nearMiss);

test('EvmAddress.safeParse never throws, whatever the input', (t) => {
  fc.assert(
    fc.property(anyInput, (v) => {
      const r = EvmAddress.safeParse(v);
      const n = typeof v === 'string' ? normalizeAddress(v) : undefined;
      return typeof r.success === 'boolean' && (n === undefined || typeof n === 'string');
    }),
    opts,
  );
  t.pass();
});

test('accepts exactly 0x + 40 hex digits, in any case (checksum not required on input)', (t) => {
  fc.assert(
    fc.property(fc.oneof(validAddress, nearMiss, fc.string()), (s) => EvmAddress.safeParse(s).success === HEX.test(s)),
    opts,
  );
  t.false(EvmAddress.safeParse(42).success);
  t.false(EvmAddress.safeParse(null).success);
});

test('the output is the EIP-55 checksum form of the same address, and parsing it again is a no-op', (t) => {
  fc.assert(
    fc.property(validAddress, (a) => {
      const out = EvmAddress.parse(a);
      return (
        out === eip55(a) &&
        out.toLowerCase() === a.toLowerCase() &&
        EvmAddress.parse(out) === out &&
        EvmAddress.parse(a.toLowerCase()) === out &&
        EvmAddress.parse(`0x${a.slice(2).toUpperCase()}`) === out &&
        normalizeAddress(a) === out
      );
    }),
    opts,
  );
  // The sandbox USDC contract, a known checksum.
  t.is(EvmAddress.parse('0x036cbd53842c5426634e7929541ec2318f3dcf7e'), '0x036CbD53842c5426634e7929541eC2318f3dCF7e');
  t.is(normalizeAddress('nope'), undefined);
});
