// x402 v1/v2 codecs and the choosing rules (router flow step 5, docs/architecture.md), and byte-for-byte agreement of our credential
// headers with the official clients' (x402@1.2.0 `createPaymentHeader`, @x402/core 2.27 `x402Client` +
// @x402/evm `ExactEvmScheme` + `encodePaymentSignatureHeader`) for the same key, nonce and clock.
import { x402Client } from '@x402/core/client';
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import test from 'ava';
import { type Hex, bytesToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createPaymentHeader as createPaymentHeaderV1 } from 'x402/client';
import { decodePayment as decodePaymentV1 } from 'x402/schemes';
import { settleResponseHeader } from 'x402/types';
import { assetOf } from '../support/merchants/fixtures.js';
import { MAX_INT64 } from '../../shared/money.js';
import { recoverAuthorizer, signAuthorization } from '../../shared/protocols/eip3009.js';
import { encodeBase64 } from '../../shared/protocols/encoding.js';
import { ChoiceReason } from '../../shared/protocols/reasons.js';
import {
  MAX_VALIDITY_SECONDS,
  MIN_VALIDITY_SECONDS,
  buildX402Payment,
  x402Authorization,
} from '../../shared/protocols/x402-authorization.js';
import {
  X402Headers,
  decodePaymentRequiredV1,
  decodePaymentRequiredV1Value,
  decodePaymentRequiredV2,
  decodePaymentRequiredV2Value,
  decodeX402Receipt,
} from '../../shared/protocols/x402-decode.js';
import { chooseX402Option } from '../../shared/protocols/x402-offers.js';
import { MAX_ACCEPTS, MAX_BODY_CHARS, MAX_HEADER_CHARS } from '../../shared/protocols/x402-schemas.js';
import { PAY_TO, S_USDC, v2Option } from '../support/offers.js';

const KEY: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const PAYER = privateKeyToAccount(KEY).address;
const S_EURC = assetOf('sandbox', 'EURC');
const L_USDC = assetOf('live', 'USDC');

/** A v1 option as x402-express@1 offers it. */
const v1Option = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  scheme: 'exact',
  network: 'base-sepolia',
  maxAmountRequired: '10000',
  resource: 'https://merchant.example/paid',
  description: 'A paid answer',
  mimeType: 'application/json',
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  asset: S_USDC.address,
  outputSchema: { input: { type: 'http', method: 'GET', discoverable: true } },
  extra: { name: 'USDC', version: '2' },
  ...over,
});

const sandbox = { environment: 'sandbox' as const };

// -------------------------------------------------------------------------------------------------------------
// Decoders

test('v2: a PAYMENT-REQUIRED written by @x402/core decodes, accepts kept verbatim', (t) => {
  const pr = {
    x402Version: 2 as const,
    error: 'Payment required',
    resource: { url: 'https://merchant.example/paid', description: 'd', mimeType: 'application/json' },
    accepts: [v2Option({ extra: { name: 'USDC', version: '2', custom: { deep: [1, 'x'] } } })],
    extensions: { bazaar: { info: { a: 1 } } },
  };
  const d = decodePaymentRequiredV2(encodePaymentRequiredHeader(pr as never));
  if (d.type !== 'decoded') return t.fail(d.reason);
  t.deepEqual(d.value.accepts, pr.accepts);
  t.deepEqual(d.value.resource, pr.resource);
  t.deepEqual(d.value.extensions, pr.extensions);
});

test('v2 decoder: invalid base64, not JSON, wrong types and empty accepts are invalid, never thrown', (t) => {
  const cases: [string, string][] = [
    ['not base64', '!!!not base64!!!'],
    [
      'url-safe alphabet',
      Buffer.from(JSON.stringify({ x402Version: 2, accepts: [v2Option()] }))
        .toString('base64url')
        .replace(/[A-Za-z0-9]/g, '-'),
    ],
    ['impossible length', 'abcde'],
    ['not JSON', encodeBase64('not json')],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')],
    ['JSON array', encodeBase64('[]')],
    ['null', encodeBase64('null')],
    ['wrong version', encodeBase64(JSON.stringify({ x402Version: 1, accepts: [v2Option()] }))],
    ['version as string', encodeBase64(JSON.stringify({ x402Version: '2', accepts: [v2Option()] }))],
    ['accepts not array', encodeBase64(JSON.stringify({ x402Version: 2, accepts: v2Option() }))],
    ['accepts of strings', encodeBase64(JSON.stringify({ x402Version: 2, accepts: ['exact'] }))],
    ['empty accepts', encodeBase64(JSON.stringify({ x402Version: 2, accepts: [] }))],
    ['resource without url', encodeBase64(JSON.stringify({ x402Version: 2, resource: {}, accepts: [v2Option()] }))],
    [
      'extensions not an object',
      encodeBase64(JSON.stringify({ x402Version: 2, accepts: [v2Option()], extensions: 'x' })),
    ],
    ['empty', ''],
  ];
  for (const [name, header] of cases) {
    const d = decodePaymentRequiredV2(header);
    t.is(d.type, 'invalid', name);
  }
});

/** The options behind proxies that count every property read of any of them. */
function watched<T extends object>(options: readonly T[]): { options: T[]; reads(): number } {
  let reads = 0;
  const handler: ProxyHandler<T> = {
    get(target, key, receiver) {
      reads++;
      return Reflect.get(target, key, receiver);
    },
  };
  return { options: options.map((o) => new Proxy(o, handler)), reads: () => reads };
}

test('v2 decoder: a header over 64 KB and 10,000 accepts are refused before any option is parsed', (t) => {
  const accepts = Array.from({ length: 10_000 }, () => v2Option());
  const huge = encodeBase64(JSON.stringify({ x402Version: 2, accepts }));
  t.true(huge.length > MAX_HEADER_CHARS);
  const d = decodePaymentRequiredV2(huge);
  t.is(d.type, 'invalid', 'refused by length');

  // Not one option is looked at: the refusal is by count (what it costs is work, not a time a loaded machine stretches).
  const counted = watched(accepts);
  const v = decodePaymentRequiredV2Value({ x402Version: 2, accepts: counted.options });
  t.is(counted.reads(), 0, 'no option was read');
  t.is(v.type, 'invalid');
  if (v.type === 'invalid') t.regex(v.reason, /more than 64/);

  t.is(decodePaymentRequiredV2Value({ x402Version: 2, accepts: accepts.slice(0, MAX_ACCEPTS) }).type, 'decoded');
  t.is(decodePaymentRequiredV2Value({ x402Version: 2, accepts: accepts.slice(0, MAX_ACCEPTS + 1) }).type, 'invalid');
});

test('v1: the 402 body of x402-express@1 decodes; broken bodies are invalid', (t) => {
  const body = JSON.stringify({ x402Version: 1, error: 'X-PAYMENT header is required', accepts: [v1Option()] });
  const d = decodePaymentRequiredV1(body);
  if (d.type !== 'decoded') return t.fail(d.reason);
  t.deepEqual(d.value.accepts[0], v1Option());
  for (const bad of [
    '',
    'not json',
    '[]',
    '{"x402Version":2,"accepts":[{}]}',
    '{"x402Version":1}',
    '{"x402Version":1,"accepts":[]}',
    '{"x402Version":1,"accepts":{}}',
  ]) {
    t.is(decodePaymentRequiredV1(bad).type, 'invalid', bad);
  }
  const tenThousand = { x402Version: 1, accepts: Array.from({ length: 10_000 }, () => v1Option()) };
  const text = JSON.stringify(tenThousand);
  t.true(text.length > MAX_BODY_CHARS);
  t.is(decodePaymentRequiredV1(text).type, 'invalid', 'refused by size');
  const counted = watched(tenThousand.accepts);
  t.is(decodePaymentRequiredV1Value({ x402Version: 1, accepts: counted.options }).type, 'invalid');
  t.is(counted.reads(), 0, 'refused by count before any option is read');
});

// -------------------------------------------------------------------------------------------------------------
// Choosing

test('choosing: USDC is preferred over EURC whatever the order; the choice carries the verbatim option', (t) => {
  const eurc = v2Option({ asset: S_EURC.address, extra: { name: 'EURC', version: '2' } });
  const usdc = v2Option();
  const c = chooseX402Option([eurc, usdc], sandbox);
  if (c.type !== 'chosen') return t.fail(c.message);
  t.is(c.index, 1);
  t.is(c.option, usdc);
  t.is(c.asset.symbol, 'USDC');
  t.is(c.amount, 10_000n);
  t.is(c.payTo, PAY_TO);
  const onlyEurc = chooseX402Option([eurc], sandbox);
  t.is(onlyEurc.type === 'chosen' ? onlyEurc.asset.symbol : undefined, 'EURC');
});

test('choosing: v1 network names and v1 maxAmountRequired are understood', (t) => {
  const c = chooseX402Option([v1Option()], sandbox);
  if (c.type !== 'chosen') return t.fail(c.message);
  t.is(c.amount, 10_000n);
  t.is(c.network.caip2, 'eip155:84532');
  t.is(c.maxTimeoutSeconds, 60);
});

test('choosing: each refusal names its reason and code', (t) => {
  const expect = (
    accepts: unknown[],
    reason: string,
    code: string = 'BCK.ROUTER.0001',
    o: Parameters<typeof chooseX402Option>[1] = sandbox,
  ) => {
    const c = chooseX402Option(accepts, o);
    if (c.type === 'chosen') return t.fail(`expected ${reason}, chose ${c.index}`);
    t.is<string, string>(c.reason, reason, JSON.stringify(accepts).slice(0, 120));
    t.is<string, string>(c.code, code);
  };
  expect([], ChoiceReason.noOptions);
  expect(['exact'], ChoiceReason.malformedOption);
  expect([v2Option({ scheme: 'upto' })], ChoiceReason.unsupportedScheme);
  expect(
    [v2Option({ extra: { name: 'USDC', version: '2', assetTransferMethod: 'permit2' } })],
    ChoiceReason.unsupportedScheme,
  );
  expect(
    [v2Option({ network: 'eip155:8453', asset: L_USDC.address, extra: { name: 'USD Coin', version: '2' } })],
    ChoiceReason.networkNotFunded,
  );
  expect([v2Option({ network: 'solana:devnet' })], ChoiceReason.networkNotFunded);
  expect([v2Option()], ChoiceReason.networkNotFunded, 'BCK.ROUTER.0001', {
    environment: 'sandbox',
    fundedNetworks: ['eip155:1'],
  });
  expect([v2Option({ asset: '0x0000000000000000000000000000000000000001' })], ChoiceReason.unknownAsset);
  expect([v2Option({ asset: L_USDC.address })], ChoiceReason.unknownAsset);
  expect(
    [v2Option({ extra: { name: 'USD Coin', version: '2' } })],
    ChoiceReason.eip712DomainMismatch,
    'BCK.ROUTER.0012',
  );
  expect([v2Option({ extra: { name: 'USDC', version: '1' } })], ChoiceReason.eip712DomainMismatch, 'BCK.ROUTER.0012');
  expect([v2Option({ extra: undefined })], ChoiceReason.eip712DomainMismatch, 'BCK.ROUTER.0012');
  expect([v2Option({ amount: '0' })], ChoiceReason.amountOutOfRange);
  expect([v2Option({ amount: (MAX_INT64 + 1n).toString() })], ChoiceReason.amountOutOfRange);
  expect([v2Option({ amount: '010' })], ChoiceReason.malformedOption);
  expect([v2Option({ amount: 10000 })], ChoiceReason.malformedOption);
  expect([v2Option({ amount: undefined })], ChoiceReason.malformedOption);
  expect([v2Option({ maxAmountRequired: '9999' })], ChoiceReason.malformedOption);
  expect([v2Option({ payTo: 'merchant.eth' })], ChoiceReason.malformedOption);
  expect([v2Option({ maxTimeoutSeconds: -1 })], ChoiceReason.malformedOption);
  expect([v2Option()], ChoiceReason.recipientNotAllowed, 'BCK.ROUTER.0001', {
    environment: 'sandbox',
    allowedRecipients: [PAYER],
  });
  expect([v2Option()], ChoiceReason.recipientNotAllowed, 'BCK.ROUTER.0001', {
    environment: 'sandbox',
    allowedRecipients: [],
  });
});

test('choosing: the live environment funds Base with its own USDC domain ("USD Coin")', (t) => {
  const live = { environment: 'live' as const };
  const c = chooseX402Option(
    [v2Option({ network: 'eip155:8453', asset: L_USDC.address, extra: { name: 'USD Coin', version: '2' } })],
    live,
  );
  t.is(c.type, 'chosen');
  const wrong = chooseX402Option(
    [v2Option({ network: 'base', asset: L_USDC.address, extra: { name: 'USDC', version: '2' } })],
    live,
  );
  t.is(wrong.type === 'none' ? wrong.code : undefined, 'BCK.ROUTER.0012');
  t.is(chooseX402Option([v2Option()], live).type, 'none', 'a sandbox option is not fundable live');
});

test('choosing: allowedRecipients compares addresses case-insensitively; ROUTER_FUNDED_NETWORKS accepts either name', (t) => {
  t.is(
    chooseX402Option([v2Option()], { environment: 'sandbox', allowedRecipients: [PAY_TO.toLowerCase()] }).type,
    'chosen',
  );
  t.is(chooseX402Option([v2Option()], { environment: 'sandbox', fundedNetworks: ['base-sepolia'] }).type, 'chosen');
  t.is(chooseX402Option([v1Option()], { environment: 'sandbox', fundedNetworks: ['eip155:84532'] }).type, 'chosen');
});

test('choosing: when nothing is fundable the option that got furthest names the reason', (t) => {
  const c = chooseX402Option(
    [
      v2Option({ network: 'eip155:1' }),
      v2Option({ scheme: 'upto' }),
      v2Option({ extra: { name: 'USD Coin', version: '2' } }),
    ],
    sandbox,
  );
  if (c.type !== 'none') return t.fail('chose');
  t.is(c.reason, ChoiceReason.eip712DomainMismatch);
  t.is(c.code, 'BCK.ROUTER.0012');
  t.is(c.rejected.length, 3);
  t.regex(c.message, /option 2/);
  // A later-stage refusal outranks a domain mismatch.
  const d = chooseX402Option([v2Option({ extra: { name: 'x', version: '2' } }), v2Option()], {
    environment: 'sandbox',
    allowedRecipients: [],
  });
  t.is(d.type === 'none' ? d.reason : undefined, ChoiceReason.recipientNotAllowed);
});

// -------------------------------------------------------------------------------------------------------------
// Authorization and credential

test('authorization: exact amount, v1 back-dated validAfter, v2 validAfter 0, validity clamped, fresh nonces', (t) => {
  const now = 1_800_000_000;
  const choice = { amount: 10_000n, payTo: PAY_TO as Hex, maxTimeoutSeconds: 300 };
  const v2 = x402Authorization({ version: 2, choice, from: PAYER.toLowerCase(), nowSeconds: now });
  t.is(v2.value, 10_000n);
  t.is(v2.validAfter, 0n);
  t.is(v2.validBefore, BigInt(now + 300));
  t.is(v2.from, PAYER);
  t.regex(v2.nonce, /^0x[0-9a-f]{64}$/);
  const v1 = x402Authorization({ version: 1, choice, from: PAYER, nowSeconds: now });
  t.is(v1.validAfter, BigInt(now - 600));
  t.not(v1.nonce, v2.nonce);
  t.is(
    x402Authorization({ version: 2, choice: { ...choice, maxTimeoutSeconds: 1 }, from: PAYER, nowSeconds: now })
      .validBefore,
    BigInt(now + MIN_VALIDITY_SECONDS),
  );
  t.is(
    x402Authorization({ version: 2, choice: { ...choice, maxTimeoutSeconds: 86_400 }, from: PAYER, nowSeconds: now })
      .validBefore,
    BigInt(now + MAX_VALIDITY_SECONDS),
  );
  t.is(
    x402Authorization({ version: 2, choice: { ...choice, maxTimeoutSeconds: undefined }, from: PAYER, nowSeconds: now })
      .validBefore,
    BigInt(now + 300),
  );
  t.true(MIN_VALIDITY_SECONDS >= 6, 'verifiers demand validBefore >= now + 6 s');
});

test('credential: v2 is PAYMENT-SIGNATURE with accepted, resource and extensions echoed; the official decoder reads it', async (t) => {
  const option = v2Option({ extra: { name: 'USDC', version: '2', assetTransferMethod: 'eip3009' } });
  const c = chooseX402Option([option], sandbox);
  if (c.type !== 'chosen') return t.fail(c.message);
  const auth = x402Authorization({ version: 2, choice: c, from: PAYER });
  const signature = signAuthorization(KEY, auth, c.asset, c.network.chainId);
  const resource = { url: 'https://merchant.example/paid', description: 'd' };
  const extensions = { mppx: { info: { method: 'GET' } } };
  const cred = buildX402Payment({ version: 2, option: c.option, resource, extensions, authorization: auth, signature });
  t.is(cred.name, 'PAYMENT-SIGNATURE');
  t.regex(cred.value, /^[A-Za-z0-9+/]+={0,2}$/);
  t.is(cred.value.length % 4, 0, 'padded');
  const decoded = decodePaymentSignatureHeader(cred.value) as any;
  t.deepEqual(Object.keys(decoded), ['x402Version', 'payload', 'extensions', 'resource', 'accepted']);
  t.deepEqual(decoded.accepted, option);
  t.deepEqual(decoded.resource, resource);
  t.deepEqual(decoded.extensions, extensions);
  t.deepEqual(Object.keys(decoded.payload), ['authorization', 'signature']);
  t.deepEqual(decoded.payload.authorization, {
    from: PAYER,
    to: PAY_TO,
    value: '10000',
    validAfter: '0',
    validBefore: auth.validBefore.toString(),
    nonce: auth.nonce,
  });
  t.is(await recoverAuthorizer(auth, decoded.payload.signature, S_USDC, 84532), PAYER);
  // Without resource and extensions the keys are absent, not null.
  const bare = JSON.parse(
    Buffer.from(buildX402Payment({ version: 2, option, authorization: auth, signature }).value, 'base64').toString(),
  );
  t.deepEqual(Object.keys(bare), ['x402Version', 'payload', 'accepted']);
});

test('credential: v1 is X-PAYMENT {x402Version, scheme, network, payload}; x402@1 decodePayment accepts it', (t) => {
  const c = chooseX402Option([v1Option()], sandbox);
  if (c.type !== 'chosen') return t.fail(c.message);
  const auth = x402Authorization({ version: 1, choice: c, from: PAYER });
  const signature = signAuthorization(KEY, auth, c.asset, c.network.chainId);
  const cred = buildX402Payment({ version: 1, option: c.option, authorization: auth, signature });
  t.is(cred.name, X402Headers.credential[1]);
  const decoded = decodePaymentV1(cred.value);
  t.is(decoded.x402Version, 1);
  t.is(decoded.scheme, 'exact');
  t.is(decoded.network, 'base-sepolia');
  t.deepEqual(Object.keys(JSON.parse(Buffer.from(cred.value, 'base64').toString()).payload), [
    'signature',
    'authorization',
  ]);
});

/** Runs `fn` with crypto.getRandomValues filling `fill` and Date.now() fixed: the official clients become deterministic. */
async function withFixedEntropy<T>(fill: number, nowMs: number, fn: () => Promise<T>): Promise<T> {
  const cryptoObj = globalThis.crypto;
  const original = cryptoObj.getRandomValues;
  const originalNow = Date.now;
  Object.defineProperty(cryptoObj, 'getRandomValues', {
    configurable: true,
    writable: true,
    value: <A extends ArrayBufferView | null>(arr: A): A => {
      if (arr !== null) new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength).fill(fill);
      return arr;
    },
  });
  Date.now = () => nowMs;
  try {
    return await fn();
  } finally {
    Object.defineProperty(cryptoObj, 'getRandomValues', { configurable: true, writable: true, value: original });
    Date.now = originalNow;
  }
}

test.serial(
  'bytes: our v2 PAYMENT-SIGNATURE equals @x402/core x402Client + @x402/evm ExactEvmScheme output',
  async (t) => {
    const nowMs = 1_900_000_000_123;
    const paymentRequired = {
      x402Version: 2 as const,
      error: 'Payment required',
      resource: { url: 'http://127.0.0.1:1234/paid', description: 'A paid answer', mimeType: 'application/json' },
      accepts: [v2Option()],
      extensions: { mppx: { info: { method: 'GET' }, schema: { type: 'object' } } },
    };
    const official = await withFixedEntropy(0xab, nowMs, async () => {
      const client = new x402Client().register('eip155:84532', new ExactEvmClientScheme(privateKeyToAccount(KEY)));
      return encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired as never));
    });

    const d = decodePaymentRequiredV2(encodePaymentRequiredHeader(paymentRequired as never));
    if (d.type !== 'decoded') return t.fail(d.reason);
    const c = chooseX402Option(d.value.accepts, sandbox);
    if (c.type !== 'chosen') return t.fail(c.message);
    const auth = x402Authorization({
      version: 2,
      choice: c,
      from: PAYER,
      nowSeconds: Math.floor(nowMs / 1000),
      nonce: bytesToHex(new Uint8Array(32).fill(0xab)),
    });
    const ours = buildX402Payment({
      version: 2,
      option: c.option,
      resource: d.value.resource,
      extensions: d.value.extensions,
      authorization: auth,
      signature: signAuthorization(KEY, auth, c.asset, c.network.chainId),
    });
    t.is(ours.value, official);
  },
);

test.serial('bytes: our v1 X-PAYMENT equals x402@1.2.0 createPaymentHeader output', async (t) => {
  const nowMs = 1_900_000_000_456;
  const requirements = v1Option();
  const official = await withFixedEntropy(0xcd, nowMs, () =>
    createPaymentHeaderV1(privateKeyToAccount(KEY) as never, 1, requirements as never),
  );
  const c = chooseX402Option([requirements], sandbox);
  if (c.type !== 'chosen') return t.fail(c.message);
  const auth = x402Authorization({
    version: 1,
    choice: c,
    from: PAYER,
    nowSeconds: Math.floor(nowMs / 1000),
    nonce: bytesToHex(new Uint8Array(32).fill(0xcd)),
  });
  const ours = buildX402Payment({
    version: 1,
    option: c.option,
    authorization: auth,
    signature: signAuthorization(KEY, auth, c.asset, c.network.chainId),
  });
  t.is(ours.value, official);
});

// -------------------------------------------------------------------------------------------------------------
// Receipts

test('receipts: PAYMENT-RESPONSE (@x402/core) and X-PAYMENT-RESPONSE (x402@1) decode to the tx hash', (t) => {
  const tx: Hex = `0x${'ab'.repeat(32)}`;
  const v2 = decodeX402Receipt(
    encodePaymentResponseHeader({ success: true, transaction: tx, network: 'eip155:84532', payer: PAYER } as never),
  );
  t.is(v2.type === 'decoded' ? v2.value.txHash : undefined, tx);
  const v1 = decodeX402Receipt(
    settleResponseHeader({ success: true, transaction: tx, network: 'base-sepolia', payer: PAYER } as never),
  );
  t.is(v1.type === 'decoded' ? v1.value.txHash : undefined, tx);
  const failed = decodeX402Receipt(
    encodeBase64(JSON.stringify({ success: false, transaction: '', network: 'base-sepolia', errorReason: 'x' })),
  );
  t.is(failed.type === 'decoded' ? failed.value.txHash : 'x', undefined);
  const notEvm = decodeX402Receipt(
    encodeBase64(
      JSON.stringify({
        success: true,
        transaction: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
        network: 'solana',
      }),
    ),
  );
  t.is(notEvm.type === 'decoded' ? notEvm.value.txHash : 'x', undefined);
  for (const bad of [
    '',
    '%%%',
    encodeBase64('nope'),
    encodeBase64('{}'),
    encodeBase64(JSON.stringify({ success: 'yes', transaction: tx, network: 'n' })),
  ]) {
    t.is(decodeX402Receipt(bad).type, 'invalid', bad);
  }
});

test('mppx route binding: only the exact shape mppx advertises is bound; the nonce is sha256(accepted | resource | extensions)', async (t) => {
  const { mppxRouteBinding } = await import('../../shared/protocols/x402-mppx-binding.js');
  const { serialize } = await import('../../shared/protocols/mpp/payment-request.js');
  const { createHash } = await import('node:crypto');
  const option = v2Option();
  const resource = { url: 'https://m.test/paid', description: 'x' };
  const extensions = { mppx: { info: { method: 'GET', opaque: 'abc' }, schema: { type: 'object' } } };
  const b = mppxRouteBinding(option, resource, extensions);
  if (b === undefined) return t.fail('an mppx offer is bound');
  t.deepEqual(b.resource, { url: 'https://m.test/paid' }, 'resource as mppx compares it: { url }');
  const info = (b.extensions.mppx as { info: Record<string, unknown> }).info;
  t.regex(String(info.nonce), /^[0-9a-f]{64}$/, 'a 32-byte salt, without 0x, as mppx writes it');
  t.like(info, { method: 'GET', opaque: 'abc' });
  const expected = createHash('sha256')
    .update([serialize(option), serialize(b.resource), serialize(b.extensions)].join('|'))
    .digest('hex');
  t.is(b.nonce, `0x${expected}`);
  t.not(mppxRouteBinding(option, resource, extensions)?.nonce, b.nonce, 'a fresh salt each time');
  // Not bound (echoed verbatim, random nonce): no mppx, no resource, no info, or keys mppx's schema would strip.
  t.is(mppxRouteBinding(option, resource, undefined), undefined);
  t.is(mppxRouteBinding(option, undefined, extensions), undefined);
  t.is(mppxRouteBinding(option, resource, { mppx: { schema: {} } }), undefined);
  t.is(mppxRouteBinding(option, resource, { ...extensions, bazaar: { info: {} } }), undefined);
  t.is(mppxRouteBinding(option, resource, { mppx: { ...extensions.mppx, extra: 1 } }), undefined);
});
