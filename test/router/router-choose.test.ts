// Choosing across protocols for a delegation's currency (router flow step 5: x402 if an option is fundable, else
// MPP), and the signed window of an x402 authorization under ROUTER_MAX_AUTH_TTL_SECS.
import test from 'ava';
import { encodeBase64 } from '../../shared/protocols/encoding.js';
import * as Challenge from '../../shared/protocols/mpp/challenge.js';
import * as PaymentRequest from '../../shared/protocols/mpp/payment-request.js';
import { preparePayment } from '../../shared/protocols/payment.js';
import { chooseFromAnswer } from '../../shared/router/steps/choose.js';
import type { RouterServices } from '../../shared/router/services.js';
import type { DelegationRow } from '../../shared/router/delegation-snapshot.js';
import { assetOf } from '../support/merchants/fixtures.js';
import { PAY_TO, v2Option } from '../support/offers.js';

const services = { ctx: { config: { ENVIRONMENT: 'sandbox' } } } as unknown as RouterServices;
const delegationIn = (currency: string) => ({ currency, allowedRecipients: null }) as unknown as DelegationRow;
const EURC = assetOf('sandbox', 'EURC');
const PAYER = '0x1111111111111111111111111111111111111111';

const mppChallenge = (currency: string): string =>
  Challenge.serialize({
    id: `c-${currency.slice(2, 8)}`,
    realm: 'merchant.test',
    method: 'evm',
    intent: 'charge',
    request: PaymentRequest.serialize({
      amount: '10000',
      currency,
      methodDetails: { chainId: 84532, credentialTypes: ['authorization'], decimals: 6 },
      recipient: PAY_TO,
    }),
    expires: new Date(Date.now() + 300_000).toISOString(),
  });

/** A 402 offering x402 v2 in USDC only (PAYMENT-REQUIRED) and MPP in EURC (WWW-Authenticate). */
const usdcX402EurcMpp = {
  header: (n: string) => {
    const name = n.toLowerCase();
    if (name === 'payment-required') return encodeBase64(JSON.stringify({ x402Version: 2, accepts: [v2Option()] }));
    if (name === 'www-authenticate') return mppChallenge(EURC.address);
    return undefined;
  },
};

test('a EUR delegation pays the EURC MPP challenge when every x402 option is USDC', (t) => {
  const choice = chooseFromAnswer(services, delegationIn('eur'), usdcX402EurcMpp, PAYER);
  t.is(choice.type, 'mpp');
  if (choice.type === 'mpp') t.is(choice.choice.asset.symbol, 'EURC');
});

test('a USD delegation still prefers the fundable x402 option', (t) => {
  const choice = chooseFromAnswer(services, delegationIn('usd'), usdcX402EurcMpp, PAYER);
  t.is(choice.type, 'x402');
  if (choice.type === 'x402') t.is(choice.choice.asset.symbol, 'USDC');
});

test('a EUR delegation offered only USDC x402 keeps the x402 choice (issuance refuses it, naming the currency)', (t) => {
  const onlyX402 = {
    header: (n: string) => (n.toLowerCase() === 'www-authenticate' ? undefined : usdcX402EurcMpp.header(n)),
  };
  const choice = chooseFromAnswer(services, delegationIn('eur'), onlyX402, PAYER);
  t.is(choice.type, 'x402');
});

test("ROUTER_MAX_AUTH_TTL_SECS caps validBefore below the offer's maxTimeoutSeconds (and below the 30 s floor)", (t) => {
  const choice = chooseFromAnswer(services, delegationIn('usd'), usdcX402EurcMpp, PAYER);
  const now = 1_800_000_000;
  const window = (cap?: number) => {
    const u = preparePayment(
      choice,
      PAYER,
      cap === undefined ? { nowSeconds: now } : { nowSeconds: now, maxAuthTtlSeconds: cap },
    );
    return Number(u.authorization.validBefore) - now;
  };
  t.is(window(), 300, 'the offer asks for 300 s');
  t.is(window(3600), 300);
  t.is(window(60), 60);
  t.is(window(10), 10, "the operator's cap wins over the 30 s floor");
});
