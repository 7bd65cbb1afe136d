// MPP: every scenario of the official conformance vectors (tempoxyz/mpp-tools conformance/vectors, copied into
// test/vectors/) as its own case, interoperability with mppx 0.11 (its challenges parse with our parser, our
// credentials are byte-identical to its evm client's and parse with its Credential.deserialize), and the
// choosing rules for the evm charge method.
import test from 'ava';
import { Challenge as MppxChallenge, Credential as MppxCredential, Receipt as MppxReceipt } from 'mppx';
import { charge as mppxEvmClientCharge } from 'mppx/evm/client';
import { Types as MppxEvmTypes } from 'mppx/evm';
import { evm, Mppx } from 'mppx/server';
import { type Hex, getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { assetOf } from '../support/merchants/fixtures.js';
import { signAuthorization } from '../../shared/protocols/eip3009.js';
import { decodeBase64Url, encodeBase64Url } from '../../shared/protocols/encoding.js';
import * as Challenge from '../../shared/protocols/mpp/challenge.js';
import * as Credential from '../../shared/protocols/mpp/credential.js';
import {
  buildMppCredential,
  challengeNonce,
  chooseMppChallenge,
  mppAuthorization,
} from '../../shared/protocols/mpp/evm-charge.js';
import * as PaymentRequest from '../../shared/protocols/mpp/payment-request.js';
import * as Receipt from '../../shared/protocols/mpp/receipt.js';
import { ChoiceReason } from '../../shared/protocols/reasons.js';
import authorizationVectors from '../vectors/mpp-authorization.json' with { type: 'json' };
import base64urlVectors from '../vectors/mpp-base64url.json' with { type: 'json' };
import wwwAuthenticateVectors from '../vectors/mpp-www-authenticate.json' with { type: 'json' };

const KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const PAYER = privateKeyToAccount(KEY).address;
const RECIPIENT = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const S_USDC = assetOf('sandbox', 'USDC');
const S_EURC = assetOf('sandbox', 'EURC');

type Json = Record<string, unknown>;

/** The parse result in the vectors' shape: known fields, request decoded. */
function asVectorObject(c: Challenge.PaymentChallenge): Json {
  const o: Json = { id: c.id, intent: c.intent, method: c.method, realm: c.realm, request: c.requestJson };
  if (c.description !== undefined) o.description = c.description;
  if (c.digest !== undefined) o.digest = c.digest;
  if (c.expires !== undefined) o.expires = c.expires;
  if (c.opaque !== undefined) o.opaque = c.opaque;
  if (c.header !== undefined) o.header = c.header;
  return o;
}

/** A PaymentChallenge from a vector `object` (request as JCS base64url, as servers write it). */
function fromVectorObject(o: Json): Challenge.PaymentChallenge {
  const request = o.request as Json;
  return {
    id: String(o.id),
    realm: String(o.realm),
    method: String(o.method),
    intent: String(o.intent),
    request: PaymentRequest.serialize(request),
    requestJson: request,
    ...(o.description === undefined ? {} : { description: String(o.description) }),
    ...(o.digest === undefined ? {} : { digest: String(o.digest) }),
    ...(o.expires === undefined ? {} : { expires: String(o.expires) }),
    ...(o.header === undefined ? {} : { header: String(o.header) }),
  };
}

const wireOf = (w: unknown): string => {
  if (typeof w === 'string') return w;
  const {
    prefix = '',
    repeat = '',
    count = 0,
    suffix = '',
  } = w as { prefix?: string; repeat?: string; count?: number; suffix?: string };
  return `${prefix}${repeat.repeat(count)}${suffix}`;
};

// -------------------------------------------------------------------------------------------------------------
// Conformance vectors: www-authenticate.json

for (const s of wwwAuthenticateVectors.scenarios) {
  test(`vector www-authenticate/${s.name}`, (t) => {
    const wire = wireOf(s.wire);
    const tests = s.tests as { parse?: boolean | { success: boolean }; format?: boolean; roundtrip?: boolean };
    // How long a parse takes is loadtest/bench-parsers.ts's figure (BENCHMARKS.md): a loaded machine stretches
    // any time, which says nothing about the parser. Here: what it parses.
    const parsed = Challenge.deserialize(wire);
    if (tests.parse === true) {
      if (parsed.type !== 'decoded') return t.fail(parsed.reason);
      t.deepEqual(asVectorObject(parsed.value), s.object as Json);
    } else if (tests.parse !== undefined) {
      t.false((tests.parse as { success: boolean }).success);
      t.is(parsed.type, 'invalid');
    }
    if (tests.format === true) {
      // The harness compares formats semantically (parse both); ours also matches the vector byte for byte.
      const formatted = Challenge.serialize(fromVectorObject(s.object as Json));
      t.is(formatted, wire);
      const again = Challenge.deserialize(formatted);
      t.deepEqual(again.type === 'decoded' ? asVectorObject(again.value) : again, s.object as Json);
    }
    if (tests.roundtrip === true) {
      const once = Challenge.deserialize(Challenge.serialize(fromVectorObject(s.object as Json)));
      if (once.type !== 'decoded') return t.fail(once.reason);
      t.deepEqual(asVectorObject(once.value), s.object as Json);
    }
  });
}

test('vector www-authenticate/adversarial: 12,000 backslashes (and 200,000 over the limit) stay linear', (t) => {
  const s = wwwAuthenticateVectors.scenarios.find((x) => x.name === 'adversarial_unclosed_quoted_extension');
  const wire = wireOf(s?.wire);
  t.true(wire.endsWith('\\'.repeat(12_000)) && wire.length > 12_000);
  // Its time is loadtest/bench-parsers.ts's figure (a ratio to a plain header, BENCHMARKS.md); here its result.
  t.true(
    wire.length <= Challenge.MAX_HEADER_CHARS,
    'the vector is within the length bound, so it is parsed, not refused',
  );
  t.is(Challenge.deserializeList(wire).type, Challenge.deserialize(wire).type);
  // Variants: closed quote after the backslashes, alternating escapes, and a value too long to look at.
  t.is(Challenge.deserialize(`${wire}"`).type, 'decoded');
  t.is(
    Challenge.deserialize(`Payment id="a", realm="r", method="m", intent="c", request="e30", x="${'\\"'.repeat(5000)}`)
      .type,
    'decoded',
  );
  // Over-long headers are refused by their length, before any character is parsed.
  const tooLong = Challenge.deserializeList(`Payment x="${'\\'.repeat(200_000)}`);
  t.like(tooLong, {
    type: 'invalid',
    reason: `WWW-Authenticate is longer than ${Challenge.MAX_HEADER_CHARS} characters`,
  });
});

// -------------------------------------------------------------------------------------------------------------
// Conformance vectors: authorization.json

function credentialAsVectorObject(c: Credential.Credential): Json {
  const challenge = asVectorObject(c.challenge);
  return { challenge, payload: c.payload, ...(c.source === undefined ? {} : { source: c.source }) };
}

for (const s of authorizationVectors.scenarios) {
  test(`vector authorization/${s.name}`, (t) => {
    const tests = s.tests as { parse?: boolean | { success: boolean }; format?: boolean; roundtrip?: boolean };
    const parsed = Credential.deserialize(s.wire);
    if (tests.parse === true) {
      if (parsed.type !== 'decoded') return t.fail(parsed.reason);
      t.deepEqual(credentialAsVectorObject(parsed.value), s.object as Json);
    } else if (tests.parse !== undefined) {
      t.false((tests.parse as { success: boolean }).success);
      t.is(parsed.type, 'invalid');
    }
    if (tests.format === true || tests.roundtrip === true) {
      const o = s.object as { challenge: Json; payload: Json; source?: string };
      const formatted = Credential.serialize({
        challenge: fromVectorObject(o.challenge),
        payload: o.payload,
        ...(o.source === undefined ? {} : { source: o.source }),
      });
      // Semantic comparison, as the conformance harness does: both parse to the same credential.
      const ours = Credential.deserialize(formatted);
      const theirs = Credential.deserialize(s.wire);
      if (ours.type !== 'decoded' || theirs.type !== 'decoded') return t.fail('parse');
      t.deepEqual(credentialAsVectorObject(ours.value), credentialAsVectorObject(theirs.value));
      t.deepEqual(credentialAsVectorObject(ours.value), s.object as Json);
    }
  });
}

// -------------------------------------------------------------------------------------------------------------
// Conformance vectors: base64url.json

for (const s of base64urlVectors.scenarios) {
  test(`vector base64url/${s.name}`, (t) => {
    const tests = s.tests as { parse?: boolean | { success: boolean }; format?: boolean; roundtrip?: boolean };
    const decoded = decodeBase64Url(s.encoded);
    if (tests.parse === true) t.is(decoded, s.decoded);
    else if (tests.parse !== undefined) t.is(decoded, undefined);
    if (tests.format === true && s.decoded !== undefined) t.is(encodeBase64Url(s.decoded), s.encoded);
    if (tests.roundtrip === true && s.decoded !== undefined)
      t.is(decodeBase64Url(encodeBase64Url(s.decoded)), s.decoded);
  });
}

// -------------------------------------------------------------------------------------------------------------
// The RFC 9110 §11.6.1 grammar beyond the vectors

const PAY = (id: string, extra = '') =>
  `Payment id="${id}", realm="r", method="evm", intent="charge", request="e30"${extra}`;

test('several challenges of several schemes in one value: every Payment challenge is returned', (t) => {
  const header = `Bearer realm="api", error="invalid_token", ${PAY('one')}, Basic dXNlcjpwYXNz==, ${PAY('two', ', description="a, \\"quoted\\" Payment id=x"')}, Negotiate`;
  const d = Challenge.deserializeList(header);
  if (d.type !== 'decoded') return t.fail(d.reason);
  t.deepEqual(
    d.value.challenges.map((c) => c.id),
    ['one', 'two'],
  );
  t.is(d.value.challenges[1]?.description, 'a, "quoted" Payment id=x');
});

test('a bad Payment challenge is rejected without losing its good neighbours; limits hold', (t) => {
  const d = Challenge.deserializeList(`${PAY('dup', ', id="again"')}, ${PAY('ok')}, Payment abc==`);
  if (d.type !== 'decoded') return t.fail(d.reason);
  t.deepEqual(
    d.value.challenges.map((c) => c.id),
    ['ok'],
  );
  t.deepEqual(
    d.value.rejected.map((r) => r.reason),
    ['duplicate parameter id', 'a Payment challenge carries auth-params, not a token68'],
  );
  const many = `${PAY('x')}${Array.from({ length: 60 }, (_, i) => `, p${i}="v"`).join('')}`;
  t.is(Challenge.deserialize(many).type, 'invalid', 'more than 64 params');
  t.is(
    Challenge.deserialize(`${PAY('x')}, d="${'a'.repeat(Challenge.MAX_HEADER_CHARS)}"`).type,
    'invalid',
    'over 16 KB',
  );
  t.is(
    Challenge.deserialize('Payment ID="x", REALM="r", Method="evm", Intent="charge", Request="e30"').type,
    'decoded',
    'param names are case-insensitive',
  );
  t.is(
    Challenge.deserialize('Payment id="x", realm="r", method="EVM", intent="charge", request="e30"').type,
    'invalid',
    'methods are lowercase',
  );
  t.is(Challenge.deserialize(PAY('x', ', expires="tomorrow"')).type, 'invalid', 'expires must be RFC 3339');
  t.is(
    Challenge.deserialize(PAY('x', ', expires=2026-01-29T12:05:00Z')).type,
    'decoded',
    'unquoted values are read up to the comma',
  );
  t.is(
    Challenge.deserialize('Payment id="x", realm="r", method="evm", intent="charge", request="W10"').type,
    'invalid',
    'request must be an object',
  );
  t.is(Challenge.deserialize('Paymentid="x"').type, 'invalid');
});

// -------------------------------------------------------------------------------------------------------------
// mppx interoperability

async function mppxChallengeHeader(
  options: { amount?: string; description?: string; meta?: Record<string, string> } = {},
): Promise<string> {
  const mppx = Mppx.create({
    methods: [
      evm.charge({
        currency: evm.assets.baseSepolia.USDC,
        recipient: RECIPIENT,
        settle: async () => ({ reference: `0x${'00'.repeat(32)}` }),
      }),
    ],
    secretKey: 'interop-secret-key-that-is-long-enough-000',
    realm: 'merchant.test',
  });
  const handler = (mppx as any).charge({
    amount: options.amount ?? '0.01',
    description: options.description,
    meta: options.meta,
  });
  const r = await handler(new Request('http://127.0.0.1:9/paid'));
  return (r.challenge as Response).headers.get('www-authenticate') ?? '';
}

test('mppx challenges (escapes, em dash, opaque) parse to the same fields mppx reads', async (t) => {
  const header = await mppxChallengeHeader({ description: 'Pay — "premium" \\ access', meta: { order: '42' } });
  t.regex(header, /\\u2014/, 'mppx escapes above Latin-1');
  const ours = Challenge.deserialize(header);
  if (ours.type !== 'decoded') return t.fail(ours.reason);
  const theirs = MppxChallenge.deserialize(header);
  t.is(ours.value.description, theirs.description);
  t.is(ours.value.id, theirs.id);
  t.is(ours.value.realm, theirs.realm);
  t.is(ours.value.expires, theirs.expires);
  t.is(ours.value.opaque, theirs.opaque);
  t.deepEqual(ours.value.requestJson, theirs.request);
  t.is(ours.value.request, PaymentRequest.serialize(theirs.request), 'mppx writes JCS');
  // And mppx reads what we format.
  t.deepEqual(MppxChallenge.deserialize(Challenge.serialize(ours.value)), theirs);
});

test.serial(
  'our evm charge credential is byte-identical to the mppx evm client and reads back with mppx',
  async (t) => {
    const header = await mppxChallengeHeader({ description: 'Pay — MPP', meta: { k: 'v' } });
    const parsed = Challenge.deserializeList(header);
    if (parsed.type !== 'decoded') return t.fail(parsed.reason);
    const choice = chooseMppChallenge(parsed.value.challenges, { environment: 'sandbox' });
    if (choice.type !== 'chosen') return t.fail(choice.message);
    const auth = mppAuthorization({ choice, from: PAYER });
    const ours = buildMppCredential({
      challenge: choice.challenge,
      chainId: choice.chainId,
      authorization: auth,
      signature: signAuthorization(KEY, auth, choice.asset, choice.chainId),
    });
    t.is(ours.name, 'Authorization');

    const client = mppxEvmClientCharge({
      account: privateKeyToAccount(KEY),
      currencies: [evm.assets.baseSepolia.USDC],
      networks: [84532],
    } as never);
    const theirs: string = await (client as any).createCredential({
      challenge: MppxChallenge.deserialize(header),
      context: {},
    });
    t.is(ours.value, theirs);

    const read = MppxCredential.deserialize(ours.value);
    t.is(read.source, `did:pkh:eip155:84532:${PAYER}`);
    t.is((read.payload as any).nonce, MppxEvmTypes.challengeHash(read.challenge));
    t.is(challengeNonce(choice.challenge), MppxEvmTypes.challengeHash(read.challenge));
    t.is((read.payload as any).validBefore, String(Math.floor(Date.parse(choice.challenge.expires ?? '') / 1000)));
  },
);

test('the echoed request is the original string even when it is not canonical JSON', (t) => {
  const request = {
    recipient: RECIPIENT,
    amount: '10000',
    currency: S_USDC.address,
    methodDetails: { credentialTypes: ['authorization'], chainId: 84532 },
  };
  const raw = encodeBase64Url(JSON.stringify(request)); // key order as sent, not JCS
  t.not(raw, PaymentRequest.serialize(request));
  const parsed = Challenge.deserialize(`Payment id="i", realm="r", method="evm", intent="charge", request="${raw}"`);
  if (parsed.type !== 'decoded') return t.fail(parsed.reason);
  const cred = Credential.serialize({ challenge: parsed.value, payload: {} });
  const back = JSON.parse(Buffer.from(cred.slice('Payment '.length), 'base64url').toString());
  t.is(back.challenge.request, raw);
});

// -------------------------------------------------------------------------------------------------------------
// Choosing (router flow step 5, docs/architecture.md: method evm, intent charge, credential type authorization, no splits, allowlisted currency)

function evmChallenge(
  over: { request?: Json; method?: string; intent?: string; expires?: string | undefined; id?: string } = {},
): Challenge.PaymentChallenge {
  const request: Json = {
    amount: '10000',
    currency: S_USDC.address,
    methodDetails: { chainId: 84532, credentialTypes: ['authorization'], decimals: 6 },
    recipient: RECIPIENT,
    ...over.request,
  };
  const expires = 'expires' in over ? over.expires : new Date(Date.now() + 300_000).toISOString();
  return {
    id: over.id ?? 'ch',
    realm: 'merchant.test',
    method: over.method ?? 'evm',
    intent: over.intent ?? 'charge',
    request: PaymentRequest.serialize(request),
    requestJson: request,
    ...(expires === undefined ? {} : { expires }),
  };
}

test('choosing MPP: an evm USDC charge is chosen, USDC preferred; each unfundable challenge names its reason', (t) => {
  const sandbox = { environment: 'sandbox' as const };
  const eurc = evmChallenge({ id: 'e', request: { currency: S_EURC.address } });
  const usdc = evmChallenge({ id: 'u' });
  const c = chooseMppChallenge([eurc, usdc], sandbox);
  if (c.type !== 'chosen') return t.fail(c.message);
  t.is(c.challenge.id, 'u');
  t.is(c.amount, 10_000n);
  t.is(c.recipient, getAddress(RECIPIENT));

  const expect = (
    ch: Challenge.PaymentChallenge,
    reason: string,
    o: Parameters<typeof chooseMppChallenge>[1] = sandbox,
  ) => {
    const r = chooseMppChallenge([ch], o);
    t.is(r.type === 'none' ? r.reason : 'chosen', reason);
    t.is(r.type === 'none' ? r.code : undefined, 'BCK.ROUTER.0001');
  };
  expect(evmChallenge({ method: 'tempo' }), ChoiceReason.unsupportedMethod);
  expect(evmChallenge({ method: 'stripe' }), ChoiceReason.unsupportedMethod);
  expect(evmChallenge({ intent: 'session' }), ChoiceReason.unsupportedIntent);
  expect(evmChallenge({ request: { amount: 'ten' } }), ChoiceReason.malformedOption);
  expect(
    evmChallenge({ request: { methodDetails: { chainId: 8453, credentialTypes: ['authorization'] } } }),
    ChoiceReason.networkNotFunded,
  );
  expect(evmChallenge(), ChoiceReason.networkNotFunded, { environment: 'live' });
  expect(evmChallenge(), ChoiceReason.networkNotFunded, { environment: 'sandbox', fundedNetworks: ['eip155:1'] });
  expect(
    evmChallenge({ request: { currency: '0x0000000000000000000000000000000000000001' } }),
    ChoiceReason.currencyNotAllowed,
  );
  expect(evmChallenge({ request: { currency: S_EURC.address } }), ChoiceReason.currencyNotAllowed, {
    environment: 'sandbox',
    assets: [S_USDC],
  });
  expect(evmChallenge({ request: { methodDetails: { chainId: 84532 } } }), ChoiceReason.unsupportedCredentialType);
  expect(
    evmChallenge({ request: { methodDetails: { chainId: 84532, credentialTypes: ['permit2'] } } }),
    ChoiceReason.unsupportedCredentialType,
  );
  expect(
    evmChallenge({
      request: {
        methodDetails: {
          chainId: 84532,
          credentialTypes: ['authorization'],
          splits: [{ amount: '1', recipient: PAYER }],
        },
      },
    }),
    ChoiceReason.splitsNotSupported,
  );
  expect(evmChallenge({ expires: new Date(Date.now() - 1000).toISOString() }), ChoiceReason.challengeExpired);
  expect(evmChallenge({ request: { amount: '0' } }), ChoiceReason.amountOutOfRange);
  expect(evmChallenge(), ChoiceReason.recipientNotAllowed, { environment: 'sandbox', allowedRecipients: [PAYER] });
  t.is(chooseMppChallenge([], sandbox).type === 'none' ? 'none' : 'chosen', 'none');
});

test('MPP authorization: nonce keccak256(id + realm), validAfter 0, validBefore = expires (or now + 300)', (t) => {
  const expires = '2030-01-01T00:00:00.000Z';
  const c = chooseMppChallenge([evmChallenge({ expires })], {
    environment: 'sandbox',
    nowMs: Date.parse('2029-12-31T00:00:00Z'),
  });
  if (c.type !== 'chosen') return t.fail(c.message);
  const a = mppAuthorization({ choice: c, from: PAYER.toLowerCase() });
  t.is(a.nonce, MppxEvmTypes.challengeHash({ id: 'ch', realm: 'merchant.test' } as never));
  t.is(a.validAfter, 0n);
  t.is(a.validBefore, BigInt(Date.parse(expires) / 1000));
  t.is(a.from, PAYER);
  const noExpiry = chooseMppChallenge([evmChallenge({ expires: undefined })], { environment: 'sandbox' });
  if (noExpiry.type !== 'chosen') return t.fail(noExpiry.message);
  t.is(mppAuthorization({ choice: noExpiry, from: PAYER, nowSeconds: 1000 }).validBefore, 1300n);
});

test('a credential names the field the challenge asks for (mppx `header` parameter)', (t) => {
  const ch = { ...evmChallenge(), header: 'Payment-Authorization' };
  const cred = buildMppCredential({
    challenge: ch,
    chainId: 84532,
    authorization: {
      from: PAYER,
      to: RECIPIENT,
      value: 1n,
      validAfter: 0n,
      validBefore: 1n,
      nonce: challengeNonce(ch),
    },
    signature: `0x${'11'.repeat(65)}`,
  });
  t.is(cred.name, 'Payment-Authorization');
  const read = MppxCredential.deserialize(cred.value);
  t.is(read.challenge.header, 'Payment-Authorization');
});

// -------------------------------------------------------------------------------------------------------------
// Receipts

test('Payment-Receipt written by mppx decodes to the tx hash; anything else is invalid', (t) => {
  const tx = `0x${'cd'.repeat(32)}`;
  const header = MppxReceipt.serialize(
    MppxReceipt.from({ method: 'evm', reference: tx, status: 'success', timestamp: new Date().toISOString() }),
  );
  const d = Receipt.deserialize(header);
  t.is<string | undefined, string | undefined>(d.type === 'decoded' ? d.value.txHash : undefined, tx);
  const other = Receipt.deserialize(
    encodeBase64Url(JSON.stringify({ method: 'stripe', reference: 'pi_123', status: 'success', timestamp: 'now' })),
  );
  t.is(other.type === 'decoded' ? other.value.txHash : 'x', undefined);
  for (const bad of [
    '',
    '!!',
    encodeBase64Url('{}'),
    encodeBase64Url(JSON.stringify({ method: 'evm', reference: tx, status: 'failed', timestamp: 'x' })),
  ]) {
    t.is(Receipt.deserialize(bad).type, 'invalid', bad);
  }
});
