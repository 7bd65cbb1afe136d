// Bounds on hostile payment input (review findings): JSON nested deeper than MAX_JSON_DEPTH is refused where it
// enters the protocol decoders (it used to reach JSON.stringify and throw RangeError, a 500); a WWW-Authenticate
// value is read up to MAX_CHALLENGES challenges; an MPP challenge's `header` parameter is honoured only for a field
// the outbound module may send, and refused while choosing (before any payment), never after.
import test from 'ava';
import { encodeBase64, encodeBase64Url } from '../../shared/protocols/encoding.js';
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../../shared/protocols/json-depth.js';
import * as Challenge from '../../shared/protocols/mpp/challenge.js';
import * as PaymentRequest from '../../shared/protocols/mpp/payment-request.js';
import { signPayment, choosePayment } from '../../shared/protocols/payment.js';
import { ChoiceReason } from '../../shared/protocols/reasons.js';
import {
  decodePaymentRequiredV1,
  decodePaymentRequiredV2,
  decodePaymentRequiredV2Value,
} from '../../shared/protocols/x402-decode.js';
import { AppError } from '../../shared/errors/app-error.js';
import { chooseFromAnswer } from '../../shared/router/steps/choose.js';
import type { RouterServices } from '../../shared/router/services.js';
import type { DelegationRow } from '../../shared/router/delegation-snapshot.js';
import { toCredentialHeader } from '../../shared/router/credential-header.js';
import { credentialHeaderRefusal, scrubRequestHeaders } from '../../shared/upstream/headers.js';
import { assetOf } from '../support/merchants/fixtures.js';
import { PAY_TO, S_USDC, v2Option as offer } from '../support/offers.js';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;
const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** `levels` arrays, one inside the other, around 0: depth `levels` (a scalar is depth 0). */
function nested(levels: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

/** The same as text, built without JSON.stringify (which is what overflows). */
const nestedText = (levels: number): string => `${'['.repeat(levels)}0${']'.repeat(levels)}`;

const v2Option = offer();

/** The same offer in EURC: a USD delegation's choosing narrows it away, re-encoding what is left (choose.ts). */
const eurcOption = { ...v2Option, asset: assetOf('sandbox', 'EURC').address, extra: { name: 'EURC', version: '2' } };

/** A PAYMENT-REQUIRED header whose `extensions.x` nests `levels` arrays (the object adds two levels around it). */
const deepRequiredHeader = (levels: number, accepts: readonly unknown[] = [v2Option]): string =>
  encodeBase64(`{"x402Version":2,"accepts":${JSON.stringify(accepts)},"extensions":{"x":${nestedText(levels)}}}`);

/** Router services and a delegation enough for choosing (choose.ts reads the config and the delegation's currency). */
const services = { ctx: { config: { ENVIRONMENT: 'sandbox' } } } as unknown as RouterServices;
const delegation = { currency: 'usd', allowedRecipients: null } as unknown as DelegationRow;

// -------------------------------------------------------------------------------------------------------------
// JSON depth

test('exceedsJsonDepth: scalars are depth 0, each array or object one level; exactly the bound passes', (t) => {
  for (const v of [null, 0, 'x', true, undefined]) t.false(exceedsJsonDepth(v, 0));
  t.false(exceedsJsonDepth([], 1));
  t.true(exceedsJsonDepth([], 0));
  t.false(exceedsJsonDepth({ a: { b: [1] } }, 3));
  t.true(exceedsJsonDepth({ a: { b: [1] } }, 2));
  t.true(exceedsJsonDepth({ a: { b: [[]] } }, 3), 'an empty container still counts');
  t.false(exceedsJsonDepth(nested(MAX_JSON_DEPTH)));
  t.true(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1)));
  // A wide, shallow value is fine however wide.
  t.false(exceedsJsonDepth(Array.from({ length: 10_000 }, (_, i) => ({ i }))));
});

test('exceedsJsonDepth walks without recursion: 100,000 levels (where JSON.stringify throws) answer true', (t) => {
  const deep = JSON.parse(nestedText(100_000)) as unknown;
  t.throws(() => JSON.stringify(deep), { instanceOf: RangeError }, 'the hazard this guards against');
  t.true(exceedsJsonDepth(deep));
  t.true(exceedsJsonDepth(deep, 99_999));
  t.false(exceedsJsonDepth(deep, 100_000));
});

test('exceedsJsonDepth: a cyclic in-process object is too deep, not an endless walk', (t) => {
  const a: unknown[] = [];
  a.push(a, a);
  t.true(exceedsJsonDepth(a));
});

// -------------------------------------------------------------------------------------------------------------
// Deep x402 and MPP offers are malformed, not a crash

test('PAYMENT-REQUIRED with extensions nested 4,200 levels: invalid, choosePayment refuses it as malformed (400)', (t) => {
  const header = deepRequiredHeader(4_200);
  t.true(header.length > 11_000 && header.length < 64 * 1024, 'fits the header limit: only the depth refuses it');
  const d = decodePaymentRequiredV2(header);
  t.deepEqual(d, { type: 'invalid', reason: `PAYMENT-REQUIRED is nested deeper than ${MAX_JSON_DEPTH} levels` });
  const r = choosePayment(
    { header: (n) => (n.toLowerCase() === 'payment-required' ? header : undefined) },
    { environment: 'sandbox' },
  );
  if (r.type !== 'none') return t.fail('a deep offer was chosen');
  t.is(r.reason, ChoiceReason.malformedOption);
  t.is(r.code, 'BCK.ROUTER.0001');
});

test('the depth bound is exact: extensions reaching MAX_JSON_DEPTH decode and are paid; one level more is refused', (t) => {
  // {..., extensions: {x: <n levels>}} is n + 2 levels deep.
  const atBound = decodePaymentRequiredV2(deepRequiredHeader(MAX_JSON_DEPTH - 2));
  t.is(atBound.type, 'decoded');
  t.is(decodePaymentRequiredV2(deepRequiredHeader(MAX_JSON_DEPTH - 1)).type, 'invalid');
  // What is accepted is echoed by the credential without trouble.
  const header = deepRequiredHeader(MAX_JSON_DEPTH - 2);
  const choice = choosePayment(
    { header: (n) => (n.toLowerCase() === 'payment-required' ? header : undefined) },
    { environment: 'sandbox' },
  );
  if (choice.type === 'none') return t.fail(choice.message);
  const paid = signPayment(choice, { address: PAYER, privateKey: KEY }, 1_700_000_000);
  t.is(paid.header.name, 'PAYMENT-SIGNATURE');
  const echoed = JSON.parse(Buffer.from(paid.header.value, 'base64').toString('utf8')) as {
    extensions: { x: unknown };
  };
  t.deepEqual(echoed.extensions.x, nested(MAX_JSON_DEPTH - 2));
});

test('a deep v1 body and a deep mode A value are refused the same way', (t) => {
  const body = `{"x402Version":1,"accepts":[{"scheme":"exact","deep":${nestedText(5_000)}}]}`;
  t.deepEqual(decodePaymentRequiredV1(body), {
    type: 'invalid',
    reason: `the 402 body is nested deeper than ${MAX_JSON_DEPTH} levels`,
  });
  const value = {
    x402Version: 2,
    accepts: [v2Option],
    resource: { url: 'https://m.test/', deep: JSON.parse(nestedText(5_000)) as unknown },
  };
  t.deepEqual(decodePaymentRequiredV2Value(value), {
    type: 'invalid',
    reason: `PAYMENT-REQUIRED is nested deeper than ${MAX_JSON_DEPTH} levels`,
  });
});

test('router choosing (mode B): a deep PAYMENT-REQUIRED or v1 body is a 400 BCK.ROUTER.0001, not a RangeError', (t) => {
  // EURC first: the delegation pays USD, so choosing narrows the offer and used to re-encode it (JSON.stringify).
  const header = deepRequiredHeader(4_200, [eurcOption, v2Option]);
  const fromHeader = t.throws(() =>
    chooseFromAnswer(
      services,
      delegation,
      { header: (n) => (n.toLowerCase() === 'payment-required' ? header : undefined) },
      PAYER,
    ),
  );
  t.true(fromHeader instanceof AppError);
  t.is((fromHeader as AppError).code, 'BCK.ROUTER.0001');
  t.is((fromHeader as AppError).httpStatus, 400);
  t.is((fromHeader as AppError).params.reason, ChoiceReason.malformedOption);
  const v1 = (o: Record<string, unknown>) =>
    JSON.stringify({ ...o, network: 'base-sepolia', maxAmountRequired: '10000', amount: undefined });
  const body = `{"x402Version":1,"accepts":[${v1(eurcOption)},${v1(v2Option)}],"x":${nestedText(4_200)}}`;
  const fromBody = t.throws(() => chooseFromAnswer(services, delegation, { header: () => undefined, body }, PAYER));
  t.is((fromBody as AppError).code, 'BCK.ROUTER.0001');
  t.is((fromBody as AppError).params.reason, ChoiceReason.malformedOption);
});

test('an MPP request nested too deeply is invalid', (t) => {
  const encoded = encodeBase64Url(`{"amount":"1","x":${nestedText(MAX_JSON_DEPTH)}}`);
  t.deepEqual(PaymentRequest.deserialize(encoded), {
    type: 'invalid',
    reason: `request is nested deeper than ${MAX_JSON_DEPTH} levels`,
  });
  t.is(
    PaymentRequest.deserialize(encodeBase64Url(`{"amount":"1","x":${nestedText(MAX_JSON_DEPTH - 1)}}`)).type,
    'decoded',
  );
});

// -------------------------------------------------------------------------------------------------------------
// WWW-Authenticate: at most MAX_CHALLENGES challenges read

const validChallenge = (id: string, header?: string): string =>
  Challenge.serialize({
    id,
    realm: 'merchant.test',
    method: 'evm',
    intent: 'charge',
    request: PaymentRequest.serialize({
      amount: '10000',
      currency: S_USDC.address,
      methodDetails: { chainId: 84532, credentialTypes: ['authorization'], decimals: 6 },
      recipient: PAY_TO,
    }),
    expires: new Date(Date.now() + 300_000).toISOString(),
    ...(header === undefined ? {} : { header }),
  });

test('"Payment,".repeat(2000): invalid, and at most MAX_CHALLENGES of its challenges are examined', (t) => {
  t.is(Challenge.MAX_CHALLENGES, 16);
  const hostile = 'Payment,'.repeat(2000);
  t.true(hostile.length <= Challenge.MAX_HEADER_CHARS);
  t.is(Challenge.deserializeList(hostile).type, 'invalid');
  // With one valid challenge first, the rejected list shows how many of the rest were looked at.
  const list = Challenge.deserializeList(`${validChallenge('ok')}, ${'Payment,'.repeat(1900)}`);
  if (list.type !== 'decoded') return t.fail(list.reason);
  t.is(list.value.challenges.length, 1);
  t.is(list.value.rejected.length, Challenge.MAX_CHALLENGES - 1);
  t.is(list.value.rejected.at(-1)?.index, Challenge.MAX_CHALLENGES - 1);
});

test('documented limit: a valid challenge after the 16th is not seen; as the 16th it is', (t) => {
  const junk = (n: number) => Array.from({ length: n }, () => 'Payment').join(', ');
  const at16 = Challenge.deserializeList(`${junk(Challenge.MAX_CHALLENGES - 1)}, ${validChallenge('sixteenth')}`);
  if (at16.type !== 'decoded') return t.fail(at16.reason);
  t.deepEqual(
    at16.value.challenges.map((c) => c.id),
    ['sixteenth'],
  );
  const at17 = Challenge.deserializeList(`${junk(Challenge.MAX_CHALLENGES)}, ${validChallenge('seventeenth')}`);
  t.is(at17.type, 'invalid');
  // Challenges of other schemes count too: the bound is on the work, whatever the scheme.
  const others = Array.from({ length: Challenge.MAX_CHALLENGES }, (_, i) => `Bearer realm="r${i}"`).join(', ');
  t.is(Challenge.deserializeList(`${others}, ${validChallenge('late')}`).type, 'invalid');
});

// -------------------------------------------------------------------------------------------------------------
// The `header` parameter of an MPP challenge (mppx `requiresAuth`: `Payment-Authorization`)

const mppAnswer = (www: string) => ({
  header: (n: string) => (n.toLowerCase() === 'www-authenticate' ? www : undefined),
});

test('router choosing: header="Payment-Authorization" is paid under that field', (t) => {
  const choice = chooseFromAnswer(
    services,
    delegation,
    mppAnswer(validChallenge('pa', 'Payment-Authorization')),
    PAYER,
  );
  if (choice.type !== 'mpp') return t.fail('not an MPP choice');
  t.is(choice.choice.challenge.header, 'Payment-Authorization');
  const paid = signPayment(choice, { address: PAYER, privateKey: KEY });
  t.is(paid.header.name, 'Payment-Authorization');
  t.regex(paid.header.value, /^Payment [A-Za-z0-9_-]+$/);
  t.deepEqual(toCredentialHeader(paid.header), { name: 'payment-authorization', value: paid.header.value });
  // A custom token the outbound module may send is honoured as well.
  const custom = chooseFromAnswer(services, delegation, mppAnswer(validChallenge('c', 'X-Mpp-Credential')), PAYER);
  t.is(custom.type === 'mpp' ? custom.choice.challenge.header : undefined, 'X-Mpp-Credential');
});

const FORBIDDEN = [
  'Host',
  'Content-Length',
  'Transfer-Encoding',
  'Connection',
  'Keep-Alive',
  'Upgrade',
  'TE',
  'Trailer',
  'Proxy-Connection',
  'Expect',
  'Cookie',
  'Proxy-Authorization',
  'Forwarded',
  'Via',
  'X-Real-IP',
  'Accept-Encoding',
  'X-Router-Target-Url',
  'x-router-delegation-id',
  'X-Forwarded-For',
  'Content-Type',
  'Content-Encoding',
  'Payment-Receipt',
  '__proto__',
];

test('router choosing: a header naming a forbidden field is refused before any payment (400, its own reason)', (t) => {
  for (const name of FORBIDDEN) {
    t.not(credentialHeaderRefusal(name), undefined, name);
    const e = t.throws(
      () => chooseFromAnswer(services, delegation, mppAnswer(validChallenge('f', name)), PAYER),
      undefined,
      name,
    );
    t.true(e instanceof AppError, name);
    t.is((e as AppError).code, 'BCK.ROUTER.0001', name);
    t.is((e as AppError).params.reason, ChoiceReason.unsupportedCredentialHeader, name);
    t.true((e as AppError).details.includes(`header ${name}`), (e as AppError).details);
  }
  // Another challenge of the same 402 without the bad field is still paid.
  const both = chooseFromAnswer(
    services,
    delegation,
    mppAnswer(`${validChallenge('bad', 'Host')}, ${validChallenge('good')}`),
    PAYER,
  );
  t.is(both.type === 'mpp' ? both.choice.challenge.id : undefined, 'good');
});

test('credentialHeaderRefusal: the credential fields and plain tokens pass; non-tokens and long names do not', (t) => {
  for (const ok of [
    'Authorization',
    'authorization',
    'Payment-Authorization',
    'PAYMENT-SIGNATURE',
    'X-PAYMENT',
    'X-Mpp-Credential',
    'a'.repeat(64),
  ]) {
    t.is(credentialHeaderRefusal(ok), undefined, ok);
  }
  for (const bad of ['', 'a b', 'a:b', 'a\r\nb', 'é', 'a'.repeat(65)])
    t.not(credentialHeaderRefusal(bad), undefined, JSON.stringify(bad));
});

test('scrubRequestHeaders: the credential replaces a caller field of the same name; a forbidden name is refused', (t) => {
  const s = scrubRequestHeaders(
    { 'X-Mpp-Credential': 'Payment forged', accept: 'application/json', authorization: 'Bearer caller' },
    { upstreamAuthorization: 'Bearer merchant-key', credential: { name: 'X-Mpp-Credential', value: 'Payment ours' } },
  );
  t.deepEqual(s, {
    ok: true,
    headers: { accept: 'application/json', authorization: 'Bearer merchant-key', 'x-mpp-credential': 'Payment ours' },
  });
  const pa = scrubRequestHeaders(
    { 'payment-authorization': 'Payment forged' },
    {
      upstreamAuthorization: 'Bearer merchant-key',
      credential: { name: 'payment-authorization', value: 'Payment ours' },
    },
  );
  t.deepEqual(pa, {
    ok: true,
    headers: { authorization: 'Bearer merchant-key', 'payment-authorization': 'Payment ours' },
  });
  for (const name of FORBIDDEN) {
    const r = scrubRequestHeaders({}, { credential: { name, value: 'Payment ours' } });
    t.false(r.ok, name);
  }
  t.throws(() => toCredentialHeader({ name: 'Host', value: 'Payment x' }), {
    message: /unexpected credential header Host/,
  });
});
