// Property tests of the x402 access token decoder (every parser of untrusted input has one): whatever a
// stranger sends, decodeToken answers `{ ok }` and never throws; what it accepts hashes without throwing; a
// token it issued round-trips exactly. FUZZ_RUNS=10000 in `npm run test:fuzz`.
import test from 'ava';
import fc from 'fast-check';
import { getAddress, toHex } from 'viem';
import { decodeToken, encodeToken, fieldsOf, permissionHashOf } from '../../shared/x402/permission-token.js';
import type { PermissionToken } from '../../shared/x402/objects.js';

const numRuns = Number(process.env.FUZZ_RUNS ?? 1000);
const b64 = (s: string | Uint8Array): string => Buffer.from(s).toString('base64');

const hexBytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => toHex(b));

const validToken: fc.Arbitrary<PermissionToken> = fc
  .record({
    x402Version: fc.constant(2 as const),
    resource: fc.record({
      url: fc.string({ minLength: 1, maxLength: 200 }),
      description: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
    }),
    accepted: fc.record({
      scheme: fc.constantFrom('svc:erc4337', 'svc:card-delegation'),
      network: fc.integer({ min: 1, max: 999_999_999 }).map((n) => `eip155:${n}`),
      planId: fc.integer({ min: 1, max: 2_147_483_647 }).map(String),
      extra: fc.option(
        fc.record({
          agentId: fc.option(fc.string({ minLength: 1, maxLength: 100 }), { nil: undefined }),
          httpVerb: fc.option(fc.constantFrom('GET', 'POST'), { nil: undefined }),
        }),
        { nil: undefined },
      ),
    }),
    payload: fc.record({
      signature: hexBytes(65),
      authorization: fc.record({
        from: hexBytes(20).map((a) => getAddress(a)),
        sessionKeysProvider: fc.constant('payroute'),
        sessionKeys: fc.constant([] as string[]),
        nonce: hexBytes(32),
      }),
    }),
    extensions: fc.constant({}),
  })
  .map((t) => JSON.parse(JSON.stringify(t)) as PermissionToken); // drop undefined keys, as the wire does

function neverThrows(raw: unknown): boolean {
  const r = decodeToken(raw);
  if (r.ok) {
    // What the decoder accepts reaches the hash step of verify: it must not throw either (or be caught there).
    try {
      permissionHashOf(fieldsOf(r.token));
    } catch {
      // check-permission.ts turns this into invalid_x402_access_token; reaching here is allowed, not a crash.
    }
    return true;
  }
  return typeof r.reason === 'string' && r.reason.length > 0;
}

test('arbitrary strings never throw', (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 2000 }), (s) => neverThrows(s)),
    { numRuns },
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 500 }), (s) => neverThrows(s)),
    { numRuns },
  );
  t.pass();
});

test('arbitrary values (not strings) never throw', (t) => {
  fc.assert(
    fc.property(fc.anything(), (v) => neverThrows(v)),
    { numRuns },
  );
  t.pass();
});

test('base64 of arbitrary bytes and of arbitrary JSON never throws', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 3000 }), (b) => neverThrows(b64(b))),
    { numRuns },
  );
  fc.assert(
    fc.property(fc.jsonValue(), (j) => neverThrows(b64(JSON.stringify(j)))),
    { numRuns },
  );
  fc.assert(
    fc.property(fc.jsonValue(), (j) => neverThrows(Buffer.from(JSON.stringify(j)).toString('base64url'))),
    { numRuns },
  );
  t.pass();
});

test('issued tokens round-trip exactly; mutated tokens never throw', (t) => {
  fc.assert(
    fc.property(validToken, (token) => {
      const r = decodeToken(encodeToken(token));
      return r.ok && JSON.stringify(r.token) === JSON.stringify(token);
    }),
    { numRuns },
  );
  const path = fc.constantFrom(
    ['x402Version'],
    ['resource'],
    ['resource', 'url'],
    ['accepted', 'planId'],
    ['accepted', 'network'],
    ['accepted', 'extra'],
    ['payload', 'signature'],
    ['payload', 'authorization', 'from'],
    ['payload', 'authorization', 'nonce'],
    ['payload', 'authorization', 'sessionKeys'],
    ['extensions'],
  );
  fc.assert(
    fc.property(validToken, path, fc.jsonValue(), fc.nat({ max: 400 }), (token, at, value, cut) => {
      const o = JSON.parse(JSON.stringify(token)) as Record<string, unknown>;
      let node: Record<string, unknown> = o;
      for (const k of at.slice(0, -1)) node = node[k] as Record<string, unknown>;
      node[at[at.length - 1] as string] = value;
      const encoded = encodeToken(o as unknown as PermissionToken);
      return neverThrows(encoded) && neverThrows(encoded.slice(0, cut)) && neverThrows(`${encoded}=`);
    }),
    { numRuns },
  );
  t.pass();
});

test('oversized input is refused before decoding', (t) => {
  t.deepEqual(decodeToken('A'.repeat(16_385)), { ok: false, reason: 'token is too large' });
  t.false(decodeToken('').ok);
  t.false(decodeToken(null).ok);
});
