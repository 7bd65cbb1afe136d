// Property tests for every parser of untrusted payment input (after mppx's Challenge.fuzz.test.ts): on
// hostile input no decoder throws — each answers `decoded` or `invalid` — and what we write reads back as written,
// by our parsers and by the official libraries'. FUZZ_RUNS runs each (1,000 in `npm test`, 10,000 in test:fuzz).
import { isDeepStrictEqual } from 'node:util';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import test from 'ava';
import fc from 'fast-check';
import { Challenge as MppxChallenge, Credential as MppxCredential } from 'mppx';
import { bytesToHex } from 'viem';
import { decodePayment as decodePaymentV1 } from 'x402/schemes';
import { assetOf } from '../support/merchants/fixtures.js';
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from '../../shared/protocols/encoding.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../../shared/protocols/json-depth.js';
import * as Challenge from '../../shared/protocols/mpp/challenge.js';
import * as Credential from '../../shared/protocols/mpp/credential.js';
import { chooseMppChallenge } from '../../shared/protocols/mpp/evm-charge.js';
import * as PaymentRequest from '../../shared/protocols/mpp/payment-request.js';
import * as Receipt from '../../shared/protocols/mpp/receipt.js';
import { buildX402Payment } from '../../shared/protocols/x402-authorization.js';
import { chooseX402Option } from '../../shared/protocols/x402-offers.js';
import {
  decodePaymentRequiredV1,
  decodePaymentRequiredV1Value,
  decodePaymentRequiredV2,
  decodePaymentRequiredV2Value,
  decodeX402Receipt,
} from '../../shared/protocols/x402-decode.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const S_USDC = assetOf('sandbox', 'USDC');
const S_EURC = assetOf('sandbox', 'EURC');

const isResult = (r: { type: string }): boolean => r.type === 'decoded' || r.type === 'invalid';

/** Strings from every corner: binary noise, unicode, base64 of JSON of anything, JSON of anything. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.anything().map((v) => {
    try {
      return JSON.stringify(v) ?? 'undefined';
    } catch {
      return String(v);
    }
  }),
  fc.anything().map((v) => {
    try {
      return encodeBase64(JSON.stringify(v) ?? '');
    } catch {
      return '';
    }
  }),
  fc.anything().map((v) => {
    try {
      return encodeBase64Url(JSON.stringify(v) ?? '');
    } catch {
      return '';
    }
  }),
);

/** Near-valid x402 bodies: the right envelope with anything in each place. */
const x402Like = fc.record(
  {
    x402Version: fc.oneof(fc.constantFrom(1, 2), fc.anything()),
    error: fc.anything(),
    resource: fc.oneof(fc.record({ url: fc.string() }), fc.anything()),
    accepts: fc.oneof(
      fc.array(
        fc.record(
          {
            scheme: fc.oneof(fc.constant('exact'), fc.anything()),
            network: fc.oneof(fc.constantFrom('eip155:84532', 'base-sepolia', 'eip155:8453', 'base'), fc.anything()),
            amount: fc.oneof(fc.bigInt({ min: -5n, max: 1n << 70n }).map(String), fc.anything()),
            maxAmountRequired: fc.oneof(fc.bigInt({ min: -5n, max: 1n << 70n }).map(String), fc.anything()),
            asset: fc.oneof(
              fc.constantFrom(S_USDC.address, S_EURC.address, S_USDC.address.toLowerCase()),
              fc.anything(),
            ),
            payTo: fc.oneof(
              fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b)),
              fc.anything(),
            ),
            maxTimeoutSeconds: fc.oneof(fc.integer(), fc.anything()),
            extra: fc.oneof(
              fc.record({ name: fc.constantFrom('USDC', 'EURC', 'USD Coin'), version: fc.constantFrom('1', '2') }),
              fc.anything(),
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 5 },
      ),
      fc.anything(),
    ),
    extensions: fc.anything(),
  },
  { requiredKeys: [] },
);

test('x402 decoders never throw on hostile text', (t) => {
  fc.assert(
    fc.property(
      hostileString,
      (s) =>
        isResult(decodePaymentRequiredV2(s)) && isResult(decodePaymentRequiredV1(s)) && isResult(decodeX402Receipt(s)),
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('x402 decoders and the chooser never throw on near-valid bodies; a decoded 402 always gets an answer', (t) => {
  fc.assert(
    fc.property(x402Like, (body) => {
      for (const r of [
        decodePaymentRequiredV2Value(body),
        decodePaymentRequiredV1Value(body),
        decodePaymentRequiredV2(encodeBase64(JSON.stringify(body))),
      ]) {
        if (!isResult(r)) return false;
        if (r.type === 'decoded') {
          const c = chooseX402Option(r.value.accepts, { environment: 'sandbox' });
          if (c.type !== 'chosen' && c.type !== 'none') return false;
          if (c.type === 'none' && !/^BCK\.ROUTER\.00(01|12)$/.test(c.code)) return false;
        }
      }
      const direct = chooseX402Option(Array.isArray(body.accepts) ? body.accepts : [body.accepts], {
        environment: 'live',
      });
      return direct.type === 'chosen' || direct.type === 'none';
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

/** Header-shaped noise: tokens, quoted strings with escapes, commas, `=`, schemes, the adversarial shapes. */
const headerPiece = fc.oneof(
  fc.constantFrom(
    'Payment',
    'payment',
    'Bearer',
    'Basic',
    ' ',
    ',',
    ', ',
    '=',
    '"',
    '\\',
    '\\"',
    '\\\\',
    '\\u2014',
    'id',
    'realm',
    'request',
    'method',
  ),
  fc.stringMatching(/^[a-z]{1,6}="[^"\\]{0,10}"$/),
  fc.stringMatching(/^[A-Za-z0-9+/=._~-]{1,12}$/),
  fc.string({ maxLength: 8 }),
);
const headerLike = fc.array(headerPiece, { maxLength: 40 }).map((parts) => parts.join(''));

// Its speed on such headers is loadtest/bench-parsers.ts's figure (BENCHMARKS.md), not asserted here: a loaded
// machine stretches any time. Its work is bounded by size: longer headers are refused unread.
test('the WWW-Authenticate parser never throws on hostile headers, and refuses over-long ones by length', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(
        headerLike,
        hostileString,
        headerLike.map((h) => `Payment id="a", realm="r", method="evm", intent="charge", request="e30", ${h}`),
      ),
      (h) => {
        const r = Challenge.deserializeList(h);
        if (!isResult(r)) return false;
        if (h.length > Challenge.MAX_HEADER_CHARS) return r.type === 'invalid';
        // Whatever we accept has the required fields and a request that decodes.
        if (r.type === 'decoded')
          return r.value.challenges.every(
            (c) => c.id.length > 0 && PaymentRequest.deserialize(c.request).type === 'decoded',
          );
        return true;
      },
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('credential, receipt, request and base64 decoders never throw on hostile text', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(
        hostileString,
        hostileString.map((s) => `Payment ${s}`),
      ),
      (s) => {
        if (
          !isResult(Credential.deserialize(s)) ||
          !isResult(Receipt.deserialize(s)) ||
          !isResult(PaymentRequest.deserialize(s))
        )
          return false;
        const a = decodeBase64(s);
        const b = decodeBase64Url(s);
        return (a === undefined || typeof a === 'string') && (b === undefined || typeof b === 'string');
      },
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('base64 and base64url round-trip any well-formed text', (t) => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      (s) => decodeBase64(encodeBase64(s)) === s && decodeBase64Url(encodeBase64Url(s)) === s,
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

// Round trips -------------------------------------------------------------------------------------------------

const quotedText = fc.string({ unit: 'grapheme', maxLength: 60 }).filter((s) => !/[\r\n]/.test(s));
// (A top-level `__proto__` key is left out: mppx's zod record drops it — no mppx server can emit one — while we keep
// what was sent.)
const jsonObject = fc.dictionary(
  fc.string({ maxLength: 10 }).filter((k) => k !== '__proto__'),
  fc.jsonValue({ maxDepth: 3 }),
  { maxKeys: 6 },
);
const challengeArb = fc.record({
  id: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/[\r\n]/.test(s)),
  realm: quotedText,
  method: fc.stringMatching(/^[a-z][a-z0-9:_-]{0,15}$/),
  intent: fc.stringMatching(/^[a-z]{1,10}$/),
  request: jsonObject,
  description: fc.option(quotedText, { nil: undefined }),
  digest: fc.option(
    fc.base64String({ maxLength: 44 }).map((b) => `sha-256=${b}`),
    { nil: undefined },
  ),
  expires: fc.option(
    fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    { nil: undefined },
  ),
  opaque: fc.option(
    fc.base64String({ maxLength: 40 }).map((b) => b.replace(/=/g, '')),
    { nil: undefined },
  ),
});

function toChallenge(c: typeof challengeArb extends fc.Arbitrary<infer T> ? T : never): Challenge.PaymentChallenge {
  const requestJson = JSON.parse(JSON.stringify(c.request)) as Record<string, unknown>;
  return {
    id: c.id,
    realm: c.realm,
    method: c.method,
    intent: c.intent,
    request: PaymentRequest.serialize(requestJson),
    requestJson,
    ...(c.description === undefined ? {} : { description: c.description }),
    ...(c.digest === undefined ? {} : { digest: c.digest }),
    ...(c.expires === undefined ? {} : { expires: c.expires }),
    ...(c.opaque === undefined ? {} : { opaque: c.opaque }),
  };
}

test('round trip: any challenge we format parses back identically, with ours and with mppx', (t) => {
  fc.assert(
    fc.property(challengeArb, fc.constantFrom('', 'Bearer realm="x", ', 'Basic abc==, '), (c, before) => {
      const challenge = toChallenge(c);
      const header = `${before}${Challenge.serialize(challenge)}, Other scheme="x"`;
      const ours = Challenge.deserializeList(header);
      if (ours.type !== 'decoded' || ours.value.challenges.length !== 1) return false;
      if (!isDeepStrictEqual(ours.value.challenges[0], challenge)) return false;
      const theirs = MppxChallenge.deserialize(Challenge.serialize(challenge));
      // (mppx drops an empty description, digest or opaque; we keep what was sent.)
      return (
        theirs.id === challenge.id &&
        theirs.realm === challenge.realm &&
        (theirs.description ?? '') === (challenge.description ?? '') &&
        (theirs.digest ?? '') === (challenge.digest ?? '') &&
        theirs.expires === challenge.expires &&
        (theirs.opaque ?? '') === (challenge.opaque ?? '') &&
        isDeepStrictEqual(theirs.request, challenge.requestJson)
      );
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test('round trip: any credential we write reads back identically, with ours and with mppx', (t) => {
  fc.assert(
    fc.property(
      challengeArb,
      jsonObject,
      fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
      (c, payload, source) => {
        const challenge = toChallenge(c);
        const payloadJson = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
        const header = Credential.serialize({
          challenge,
          payload: payloadJson,
          ...(source === undefined ? {} : { source }),
        });
        const ours = Credential.deserialize(header);
        if (ours.type !== 'decoded') return false;
        if (!isDeepStrictEqual(ours.value.challenge, challenge) || !isDeepStrictEqual(ours.value.payload, payloadJson))
          return false;
        if (ours.value.source !== source) return false;
        const theirs = MppxCredential.deserialize(header);
        return (
          theirs.challenge.id === challenge.id &&
          isDeepStrictEqual(theirs.challenge.request, challenge.requestJson) &&
          isDeepStrictEqual(theirs.payload, payloadJson)
        );
      },
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('round trip: any fundable x402 option yields a credential the official decoders read back verbatim', (t) => {
  const option = fc.record({
    asset: fc.constantFrom(S_USDC, S_EURC),
    // x402@1's payload schema caps `value` at 18 digits (EvmMaxAtomicUnits); v2 takes any uint.
    amount: fc.bigInt({ min: 1n, max: 999_999_999_999_999_999n }),
    payTo: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b)),
    maxTimeoutSeconds: fc.integer({ min: 1, max: 100_000 }),
    unknown: fc.dictionary(
      fc
        .string({ maxLength: 8 })
        .filter(
          (k) =>
            ![
              'scheme',
              'network',
              'amount',
              'asset',
              'payTo',
              'maxTimeoutSeconds',
              'extra',
              'maxAmountRequired',
            ].includes(k),
        ),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 3 },
    ),
    v1: fc.boolean(),
  });
  fc.assert(
    fc.property(option, (o) => {
      const offered = JSON.parse(
        JSON.stringify({
          ...o.unknown,
          scheme: 'exact',
          network: o.v1 ? 'base-sepolia' : 'eip155:84532',
          ...(o.v1 ? { maxAmountRequired: o.amount.toString() } : { amount: o.amount.toString() }),
          asset: o.asset.address,
          payTo: o.payTo,
          maxTimeoutSeconds: o.maxTimeoutSeconds,
          extra: { name: o.asset.eip712.name, version: o.asset.eip712.version },
        }),
      ) as Record<string, unknown>;
      const c = chooseX402Option([offered], { environment: 'sandbox' });
      if (c.type !== 'chosen' || c.amount !== o.amount) return false;
      const authorization = {
        from: o.payTo,
        to: c.payTo,
        value: c.amount,
        validAfter: 0n,
        validBefore: 1n,
        nonce: `0x${'00'.repeat(32)}` as const,
      };
      const signature = `0x${'11'.repeat(65)}` as const;
      if (o.v1) {
        const cred = buildX402Payment({ version: 1, option: c.option, authorization, signature });
        const back = decodePaymentV1(cred.value);
        return (
          back.network === 'base-sepolia' &&
          (back.payload as { authorization: { value: string } }).authorization.value === o.amount.toString()
        );
      }
      const cred = buildX402Payment({
        version: 2,
        option: c.option,
        resource: { url: 'https://m.example/x' },
        authorization,
        signature,
      });
      const back = decodePaymentSignatureHeader(cred.value) as { accepted: unknown };
      return JSON.stringify(back.accepted) === JSON.stringify(offered);
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

test('the MPP chooser never throws on any challenge our parser accepts', (t) => {
  fc.assert(
    fc.property(challengeArb, jsonObject, (c, methodDetails) => {
      const challenge = toChallenge({
        ...c,
        method: 'evm',
        intent: 'charge',
        request: { ...c.request, methodDetails, amount: '1', currency: S_USDC.address, recipient: S_EURC.address },
      });
      const r = chooseMppChallenge([challenge, toChallenge(c)], { environment: 'sandbox' });
      return r.type === 'chosen' || r.type === 'none';
    }),
    { numRuns: RUNS },
  );
  t.pass();
});

// -------------------------------------------------------------------------------------------------------------
// JSON depth (json-depth.ts): the iterative check agrees with the recursive definition, and no depth breaks it.

/** Depth by the definition (recursive: only for the shallow values fast-check generates). */
function depthOf(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
  return 1 + children.reduce<number>((m, c) => Math.max(m, depthOf(c)), 0);
}

/** `levels` containers, arrays or objects as `shape` says (cycled), around `leaf`; built without recursion. */
function nestShaped(levels: number, shape: readonly boolean[], leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = shape[i % shape.length] ? [v] : { k: v };
  return v;
}

test('exceedsJsonDepth agrees with the recursive depth on any JSON value and any bound', (t) => {
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 12 }),
      fc.nat({ max: 14 }),
      (v, max) => exceedsJsonDepth(v, max) === depthOf(v) > max,
    ),
    { numRuns: RUNS },
  );
  t.pass();
});

test('exceedsJsonDepth never throws, however deep: true exactly above MAX_JSON_DEPTH', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 20_000 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
      fc.jsonValue({ maxDepth: 2 }),
      (levels, shape, leaf) =>
        exceedsJsonDepth(nestShaped(levels, shape, leaf)) === levels + depthOf(leaf) > MAX_JSON_DEPTH,
    ),
    { numRuns: Math.min(RUNS, 300) },
  );
  t.pass();
});

test('a 402 nested at any depth decodes or is refused, never throws: refused exactly above MAX_JSON_DEPTH', (t) => {
  const option = {
    scheme: 'exact',
    network: 'eip155:84532',
    amount: '1',
    asset: S_USDC.address,
    payTo: S_EURC.address,
    extra: { name: 'USDC', version: '2' },
  };
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 6_000 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
      (levels, shape) => {
        // {x402Version, accepts, extensions: {x: <levels>}}: levels + 2 deep.
        const text = JSON.stringify({ x402Version: 2, accepts: [option], extensions: { x: '@' } }).replace(
          '"@"',
          nestedText(levels, shape),
        );
        const header = decodePaymentRequiredV2(encodeBase64(text));
        const body = decodePaymentRequiredV1(text.replace('"x402Version":2', '"x402Version":1'));
        const refused = levels + 2 > MAX_JSON_DEPTH;
        return (header.type === 'invalid') === refused && (refused ? body.type === 'invalid' : true);
      },
    ),
    { numRuns: Math.min(RUNS, 200) },
  );
  t.pass();
});

/** `levels` containers as text (arrays or objects as `shape` says, cycled) around 0, without JSON.stringify. */
function nestedText(levels: number, shape: readonly boolean[]): string {
  let open = '';
  let close = '';
  for (let i = 0; i < levels; i++) {
    const array = shape[i % shape.length];
    open += array ? '[' : '{"k":';
    close = (array ? ']' : '}') + close;
  }
  return `${open}0${close}`;
}

test('WWW-Authenticate: a Payment challenge is seen exactly when fewer than MAX_CHALLENGES challenges precede it', (t) => {
  const valid = Challenge.serialize({
    id: 'v',
    realm: 'r',
    method: 'evm',
    intent: 'charge',
    request: PaymentRequest.serialize({ amount: '1' }),
  });
  const junk = fc.constantFrom('Payment', 'Bearer', 'Basic realm="x"', 'Payment id="only"', 'Negotiate abc==');
  fc.assert(
    fc.property(fc.array(junk, { maxLength: 40 }), (before) => {
      const r = Challenge.deserializeList([...before, valid].join(', '));
      const seen = r.type === 'decoded' && r.value.challenges.some((c) => c.id === 'v');
      const examined = r.type === 'decoded' ? r.value.challenges.length + r.value.rejected.length : 0;
      return seen === before.length < Challenge.MAX_CHALLENGES && examined <= Challenge.MAX_CHALLENGES;
    }),
    { numRuns: RUNS },
  );
  t.pass();
});
