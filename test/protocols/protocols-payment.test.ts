// Detection and the cross-protocol rule (router flow step 5, docs/architecture.md): `PAYMENT-REQUIRED` -> x402 v2, JSON body with
// `accepts` -> x402 v1, `WWW-Authenticate: Payment` -> MPP; x402 when fundable, else MPP, never both.
import test from 'ava';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeBase64 } from '../../shared/protocols/encoding.js';
import * as Challenge from '../../shared/protocols/mpp/challenge.js';
import * as Credential from '../../shared/protocols/mpp/credential.js';
import * as PaymentRequest from '../../shared/protocols/mpp/payment-request.js';
import { type UpstreamAnswer, signPayment, choosePayment } from '../../shared/protocols/payment.js';
import { ChoiceReason } from '../../shared/protocols/reasons.js';
import { BUYER, BUYER_KEY, assetOf } from '../support/merchants/fixtures.js';

const USDC = assetOf('sandbox', 'USDC');
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const sandbox = { environment: 'sandbox' as const };
const signer = { address: BUYER, privateKey: BUYER_KEY };

const option = (over: Record<string, unknown> = {}) => ({
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '10000',
  asset: USDC.address,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: 'USDC', version: '2' },
  ...over,
});
const v2Header = (accepts: unknown[]) =>
  encodeBase64(JSON.stringify({ x402Version: 2, resource: { url: 'https://m.example/x' }, accepts }));
const v1Body = (accepts: unknown[]) =>
  JSON.stringify({ x402Version: 1, error: 'X-PAYMENT header is required', accepts });
const mppHeader = (request: Record<string, unknown> = {}) =>
  Challenge.serialize({
    id: 'ch1',
    realm: 'm.example',
    method: 'evm',
    intent: 'charge',
    request: PaymentRequest.serialize({
      amount: '20000',
      currency: USDC.address,
      methodDetails: { chainId: 84532, credentialTypes: ['authorization'], decimals: 6 },
      recipient: PAY_TO,
      ...request,
    }),
    expires: new Date(Date.now() + 300_000).toISOString(),
  });

function answer(headers: Record<string, string>, body?: string): UpstreamAnswer {
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { header: (name) => lower.get(name.toLowerCase()), body };
}

test('PAYMENT-REQUIRED is x402 v2; a JSON body with accepts is x402 v1; WWW-Authenticate: Payment is MPP', (t) => {
  const v2 = choosePayment(answer({ 'payment-required': v2Header([option()]) }, '{}'), sandbox);
  t.true(v2.type === 'x402' && v2.version === 2);
  const v1 = choosePayment(
    answer({}, v1Body([option({ network: 'base-sepolia', amount: undefined, maxAmountRequired: '10000' })])),
    sandbox,
  );
  t.true(v1.type === 'x402' && v1.version === 1);
  const mpp = choosePayment(answer({ 'WWW-Authenticate': `Bearer realm="x", ${mppHeader()}` }), sandbox);
  t.is(mpp.type, 'mpp');
});

test('offered both: x402 when fundable (never both), MPP when x402 is not', (t) => {
  const both = answer({ 'payment-required': v2Header([option()]), 'www-authenticate': mppHeader() });
  t.is(choosePayment(both, sandbox).type, 'x402');
  const x402Unfundable = answer({
    'payment-required': v2Header([option({ network: 'eip155:1' })]),
    'www-authenticate': mppHeader(),
  });
  t.is(choosePayment(x402Unfundable, sandbox).type, 'mpp');
  const x402Broken = answer({ 'payment-required': 'not base64!', 'www-authenticate': mppHeader() });
  t.is(choosePayment(x402Broken, sandbox).type, 'mpp');
});

test('nothing fundable: the furthest refusal across both protocols names the reason and code', (t) => {
  const r = choosePayment(
    answer({
      'payment-required': v2Header([option({ extra: { name: 'USD Coin', version: '2' } })]),
      'www-authenticate': mppHeader({ methodDetails: { chainId: 1 } }),
    }),
    sandbox,
  );
  if (r.type !== 'none') return t.fail('chose');
  t.is(r.reason, ChoiceReason.eip712DomainMismatch);
  t.is(r.code, 'BCK.ROUTER.0012');
  t.is(r.rejected.length, 2);
  const tempoOnly = choosePayment(
    answer({
      'www-authenticate': Challenge.serialize({
        id: 'x',
        realm: 'r',
        method: 'tempo',
        intent: 'charge',
        request: 'e30',
      }),
    }),
    sandbox,
  );
  t.is(tempoOnly.type === 'none' ? tempoOnly.reason : '', ChoiceReason.unsupportedMethod);
  const none = choosePayment(answer({ 'www-authenticate': 'Bearer realm="Payment"' }, '{"error":"pay me"}'), sandbox);
  t.is(none.type === 'none' ? none.reason : '', ChoiceReason.noOptions);
  const broken = choosePayment(answer({ 'payment-required': '%%%' }), sandbox);
  t.is(
    broken.type === 'none' ? `${broken.reason} ${broken.code}` : '',
    `${ChoiceReason.malformedOption} BCK.ROUTER.0001`,
  );
});

test('signPayment: the record facts and the header for each protocol', (t) => {
  const v2 = choosePayment(answer({ 'payment-required': v2Header([option()]) }), sandbox);
  if (v2.type === 'none') return t.fail(v2.message);
  const c2 = signPayment(v2, signer);
  t.is(c2.protocol, 'x402');
  t.is(c2.x402Version, 2);
  t.is(c2.header.name, 'PAYMENT-SIGNATURE');
  t.deepEqual(
    { ...c2.settlement, asset: c2.settlement.asset.symbol },
    { recipient: PAY_TO, amount: 10_000n, network: 'eip155:84532', asset: 'USDC', scheme: 'exact' },
  );

  const v1 = choosePayment(
    answer({}, v1Body([option({ network: 'base-sepolia', amount: undefined, maxAmountRequired: '5' })])),
    sandbox,
  );
  if (v1.type === 'none') return t.fail(v1.message);
  const c1 = signPayment(v1, signer);
  t.is(c1.header.name, 'X-PAYMENT');
  t.is(c1.settlement.network, 'base-sepolia');
  t.is(c1.settlement.amount, 5n);

  const mpp = choosePayment(answer({ 'www-authenticate': mppHeader() }), sandbox);
  if (mpp.type === 'none') return t.fail(mpp.message);
  const cm = signPayment(mpp, { address: privateKeyToAccount(BUYER_KEY).address, privateKey: BUYER_KEY });
  t.is(cm.protocol, 'mpp');
  t.is(cm.header.name, 'Authorization');
  t.is(cm.settlement.scheme, 'charge');
  t.is(cm.settlement.amount, 20_000n);
  t.is(cm.settlement.network, 'eip155:84532');
  const read = Credential.deserialize(cm.header.value);
  t.is(read.type === 'decoded' ? read.value.source : undefined, `did:pkh:eip155:84532:${BUYER}`);
});

test('a payee that is the zero address or the payer is not fundable; another option of the offer is chosen', (t) => {
  const zero = '0x0000000000000000000000000000000000000000';
  const withPayer = { ...sandbox, payer: BUYER };
  const cases = [
    { payTo: zero, reason: ChoiceReason.payeeZeroAddress, opts: sandbox },
    // Compared case-insensitively: a lower-case spelling of the payer is the payer.
    { payTo: BUYER.toLowerCase(), reason: ChoiceReason.payeeIsPayer, opts: withPayer },
  ];
  for (const { payTo, reason, opts } of cases) {
    for (const offered of [
      answer({ 'payment-required': v2Header([option({ payTo })]) }),
      answer({}, v1Body([option({ payTo, network: 'base-sepolia', amount: undefined, maxAmountRequired: '10000' })])),
      answer({ 'www-authenticate': mppHeader({ recipient: payTo }) }),
    ]) {
      const r = choosePayment(offered, opts);
      t.is(r.type, 'none');
      if (r.type === 'none') {
        t.is(r.reason, reason);
        t.is(r.code, 'BCK.ROUTER.0001');
      }
    }
    // The refused option first and a good one after: the good one is chosen (prefer-USDC does not keep the first).
    const both = choosePayment(
      answer({ 'payment-required': v2Header([option({ payTo }), option({ amount: '20000' })]) }),
      opts,
    );
    t.is(both.type === 'x402' ? both.choice.index : undefined, 1);
  }
  // Without a payer, the buyer's address is a payee like any other.
  t.is(choosePayment(answer({ 'payment-required': v2Header([option({ payTo: BUYER })]) }), sandbox).type, 'x402');
});
