// The proof that our protocol layer pays real merchants: three merchants built with the official libraries run on
// 127.0.0.1 in this process (test/support/merchants/), each with only the chain stubbed. For each, the buyer side
// is ours end to end — decode the 402 with our decoders, choose with our rules, sign with our native signer, build
// our credential — and the merchant's library answers 200 with a receipt our decoder reads. Then the five bad
// credentials (a flipped signature byte, a wrong EIP-712 name or version, amount - 1, a reused nonce,
// an expired validBefore) are each REFUSED by the library and move no money: that refusal is what makes "the
// official library accepts it" mean something.
import test from 'ava';
import { type Hex, getAddress } from 'viem';
import { type TransferAuthorization, signAuthorization } from '../../shared/protocols/eip3009.js';
import * as Challenge from '../../shared/protocols/mpp/challenge.js';
import {
  type MppChoice,
  buildMppCredential,
  chooseMppChallenge,
  mppAuthorization,
} from '../../shared/protocols/mpp/evm-charge.js';
import * as Receipt from '../../shared/protocols/mpp/receipt.js';
import { signPayment, choosePayment } from '../../shared/protocols/payment.js';
import { type X402Choice, chooseX402Option } from '../../shared/protocols/x402-offers.js';
import {
  X402Headers,
  decodePaymentRequiredV1,
  decodePaymentRequiredV2,
  decodeX402Receipt,
} from '../../shared/protocols/x402-decode.js';
import { buildX402Payment, x402Authorization } from '../../shared/protocols/x402-authorization.js';
import type { PaymentRequiredV2 } from '../../shared/protocols/x402-schemas.js';
import { StubChain } from '../support/merchants/chain.js';
import { BUYER, BUYER_KEY, MERCHANT_MPP, MERCHANT_V1, MERCHANT_V2, assetOf } from '../support/merchants/fixtures.js';
import { type MppxMerchant, startMppxMerchant } from '../support/merchants/mppx.js';
import { type X402V1Merchant, startX402V1Merchant } from '../support/merchants/x402-v1.js';
import { type X402V2Merchant, startX402V2Merchant } from '../support/merchants/x402-v2.js';

const USDC = assetOf('sandbox', 'USDC');
const EURC = assetOf('sandbox', 'EURC');
const CHAIN_ID = 84532;
const PRICE = 10_000n; // 0.01 USDC
const sandbox = { environment: 'sandbox' as const };

const chain = new StubChain(CHAIN_ID, [USDC, EURC]);
chain.mint(USDC.address, BUYER, 1_000_000_000n);
chain.mint(EURC.address, BUYER, 1_000_000_000n);

let v2: X402V2Merchant;
let v1: X402V1Merchant;
let mpp: MppxMerchant;

test.before(async () => {
  v2 = await startX402V2Merchant({ chain, payTo: MERCHANT_V2, usdcAmount: PRICE.toString(), usdc: USDC, eurc: EURC });
  v1 = await startX402V1Merchant({ chain, payTo: MERCHANT_V1, usdcAmount: PRICE.toString(), usdc: USDC });
  mpp = await startMppxMerchant({ chain, recipient: MERCHANT_MPP, amount: '0.01' });
});

test.after.always(async () => {
  await Promise.all([v2?.close(), v1?.close(), mpp?.close()]);
});

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

async function call(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** The mistakes a broken buyer (or an attacker replaying or editing a credential) could make. */
type Bad =
  | 'flipped signature byte'
  | 'wrong EIP-712 name'
  | 'wrong EIP-712 version'
  | 'amount - 1'
  | 'reused nonce'
  | 'expired validBefore';
const BAD: readonly Bad[] = [
  'flipped signature byte',
  'wrong EIP-712 name',
  'wrong EIP-712 version',
  'amount - 1',
  'reused nonce',
  'expired validBefore',
];

/** Signs `auth`, applying the signing-side mistakes. */
function sign(auth: TransferAuthorization, token: typeof USDC, bad: Bad | undefined): Hex {
  const domainToken =
    bad === 'wrong EIP-712 name'
      ? { ...token, eip712: { ...token.eip712, name: 'USD Coin' } } // the live (Base mainnet) name: the realistic mix-up
      : bad === 'wrong EIP-712 version'
        ? { ...token, eip712: { ...token.eip712, version: '1' } }
        : token;
  const signature = signAuthorization(BUYER_KEY, auth, domainToken, CHAIN_ID);
  if (bad !== 'flipped signature byte') return signature;
  // A byte of s (bytes 32..63), below its top byte: s stays a valid scalar, so the signature recovers — to someone
  // else. (A flipped byte of r makes r a non-point half the time; mppx then answers 500, not 402: see below.)
  const bytes = Buffer.from(signature.slice(2), 'hex');
  bytes[40] = (bytes[40] ?? 0) ^ 0xff;
  return `0x${bytes.toString('hex')}`;
}

/** Replaces r with zero: a signature no curve point matches (recovery itself fails). */
function zeroR(
  value: string,
  decode: (v: string) => string,
  encode: (v: string) => string,
  path: (o: any) => { signature: string },
): string {
  const o = JSON.parse(decode(value));
  const holder = path(o);
  holder.signature = `0x${'00'.repeat(32)}${holder.signature.slice(66)}`;
  return encode(JSON.stringify(o));
}

/** Applies the authorization-side mistakes (the signature covers the edited values: only the merchant can object). */
function mutate(auth: TransferAuthorization, bad: Bad | undefined, reuse: Hex | undefined): TransferAuthorization {
  const now = BigInt(Math.floor(Date.now() / 1000));
  switch (bad) {
    case 'amount - 1':
      return { ...auth, value: auth.value - 1n };
    case 'expired validBefore':
      return { ...auth, validBefore: now - 10n };
    case 'reused nonce':
      if (reuse === undefined) throw new Error('no nonce to reuse');
      // A fresh signature (another validBefore) over a nonce the token has already consumed.
      return { ...auth, nonce: reuse, validBefore: auth.validBefore - 1n };
    default:
      return auth;
  }
}

/** Money moved by a nonce (the merchant settled it on the stub chain). */
const spent = (token: string, nonce: Hex): boolean => chain.isUsed(token, BUYER, nonce);

// -------------------------------------------------------------------------------------------------------------
// (a) x402 v2: @x402/express + x402Facilitator + @x402/evm ExactEvmScheme

interface X402Attempt {
  answer: Answer;
  choice: X402Choice;
  auth: TransferAuthorization;
}

async function payX402V2(url: string, o: { bad?: Bad; reuse?: Hex; only?: 'EURC' } = {}): Promise<X402Attempt> {
  const unpaid = await call(url);
  if (unpaid.status !== 402) throw new Error(`expected 402, got ${unpaid.status}`);
  const header = unpaid.headers.get(X402Headers.paymentRequired);
  if (header === null) throw new Error('no PAYMENT-REQUIRED');
  const pr = decodePaymentRequiredV2(header);
  if (pr.type !== 'decoded') throw new Error(pr.reason);
  const accepts =
    o.only === 'EURC'
      ? pr.value.accepts.filter((a) => String(a.asset).toLowerCase() === EURC.address.toLowerCase())
      : pr.value.accepts;
  const choice = chooseX402Option(accepts, sandbox);
  if (choice.type !== 'chosen') throw new Error(choice.message);
  const auth = mutate(x402Authorization({ version: 2, choice, from: BUYER }), o.bad, o.reuse);
  const cred = buildX402Payment({
    version: 2,
    option: choice.option,
    resource: (pr.value as PaymentRequiredV2).resource,
    extensions: pr.value.extensions,
    authorization: auth,
    signature: sign(auth, choice.asset, o.bad),
  });
  return { answer: await call(url, { [cred.name]: cred.value }), choice, auth };
}

test.serial('x402 v2 (@x402/express): our credential is accepted, USDC preferred, PAYMENT-RESPONSE read', async (t) => {
  const before = chain.balanceOf(USDC.address, MERCHANT_V2);
  const { answer, choice, auth } = await payX402V2(v2.url + v2.paidPath);
  t.is(choice.index, 1, 'USDC, offered second after EURC');
  t.is(answer.status, 200, answer.body);
  t.deepEqual(JSON.parse(answer.body), { answer: 42 });
  const receiptHeader = answer.headers.get(X402Headers.receipt[2]);
  if (receiptHeader === null) return t.fail('no PAYMENT-RESPONSE');
  const receipt = decodeX402Receipt(receiptHeader);
  if (receipt.type !== 'decoded') return t.fail(receipt.reason);
  t.true(receipt.value.success);
  t.regex(receipt.value.txHash ?? '', /^0x[0-9a-f]{64}$/);
  t.truthy(chain.receipts.get(receipt.value.txHash ?? ''), 'the hash is the stub chain transaction');
  t.is(getAddress(receipt.value.payer ?? '0x0'), BUYER);
  t.true(spent(USDC.address, auth.nonce));
  t.is(chain.balanceOf(USDC.address, MERCHANT_V2) - before, PRICE, 'exactly the price moved');
});

test.serial('x402 v2 (@x402/express): the EURC option (EIP-712 "EURC"/"2") is accepted too', async (t) => {
  const before = chain.balanceOf(EURC.address, MERCHANT_V2);
  const { answer, choice } = await payX402V2(v2.url + v2.paidPath, { only: 'EURC' });
  t.is(choice.asset.symbol, 'EURC');
  t.is(answer.status, 200, answer.body);
  t.is(chain.balanceOf(EURC.address, MERCHANT_V2) - before, PRICE);
});

/** Why @x402/evm's facilitator refuses each (its reason codes, mechanisms/evm exact facilitator errors). */
const V2_REASON: Record<Bad, RegExp> = {
  'flipped signature byte': /^invalid_exact_evm_signature$/,
  'wrong EIP-712 name': /^invalid_exact_evm_signature$/,
  'wrong EIP-712 version': /^invalid_exact_evm_signature$/,
  'amount - 1': /^invalid_exact_evm_payload_authorization_value_mismatch$/,
  'reused nonce': /^invalid_exact_evm_nonce_already_used$/,
  'expired validBefore': /^invalid_exact_evm_payload_authorization_valid_before$/,
};

for (const bad of BAD) {
  test.serial(`x402 v2 (@x402/express) refuses: ${bad}`, async (t) => {
    let reuse: Hex | undefined;
    if (bad === 'reused nonce') {
      const first = await payX402V2(v2.url + v2.paidPath);
      t.is(first.answer.status, 200, 'the original payment goes through');
      reuse = first.auth.nonce;
    }
    const before = chain.balanceOf(USDC.address, MERCHANT_V2);
    const transfers = chain.transfers.length;
    const { answer, auth } = await payX402V2(v2.url + v2.paidPath, { bad, ...(reuse === undefined ? {} : { reuse }) });
    t.is(answer.status, 402, answer.body);
    t.is(answer.headers.get(X402Headers.receipt[2]), null, 'no receipt');
    t.not(answer.body, JSON.stringify({ answer: 42 }), 'the paid content is not served');
    t.is(chain.transfers.length, transfers, 'no transfer executed');
    t.is(chain.balanceOf(USDC.address, MERCHANT_V2), before, 'no money moved');
    if (bad !== 'reused nonce') t.false(spent(USDC.address, auth.nonce));
    const again = decodePaymentRequiredV2(answer.headers.get(X402Headers.paymentRequired) ?? '');
    const reason = again.type === 'decoded' ? String(again.value.error) : again.reason;
    t.log(`@x402 said: ${reason}`);
    t.regex(reason, V2_REASON[bad], 'refused for the right reason');
  });
}

// -------------------------------------------------------------------------------------------------------------
// (b) x402 v1: x402-express@1.2.0 + loopback facilitator running x402@1.2.0 verify/settle

async function payX402V1(url: string, o: { bad?: Bad; reuse?: Hex } = {}): Promise<X402Attempt> {
  const unpaid = await call(url);
  if (unpaid.status !== 402) throw new Error(`expected 402, got ${unpaid.status}`);
  const pr = decodePaymentRequiredV1(unpaid.body);
  if (pr.type !== 'decoded') throw new Error(pr.reason);
  const choice = chooseX402Option(pr.value.accepts, sandbox);
  if (choice.type !== 'chosen') throw new Error(choice.message);
  const auth = mutate(x402Authorization({ version: 1, choice, from: BUYER }), o.bad, o.reuse);
  const cred = buildX402Payment({
    version: 1,
    option: choice.option,
    authorization: auth,
    signature: sign(auth, choice.asset, o.bad),
  });
  if (cred.name !== 'X-PAYMENT') throw new Error(`v1 credential header is ${cred.name}`);
  return { answer: await call(url, { [cred.name]: cred.value }), choice, auth };
}

test.serial('x402 v1 (x402-express@1.2.0): our credential is accepted, X-PAYMENT-RESPONSE read', async (t) => {
  const before = chain.balanceOf(USDC.address, MERCHANT_V1);
  const { answer, auth } = await payX402V1(v1.url + v1.paidPath);
  t.is(answer.status, 200, answer.body);
  t.deepEqual(JSON.parse(answer.body), { answer: 42 });
  const receiptHeader = answer.headers.get(X402Headers.receipt[1]);
  if (receiptHeader === null) return t.fail('no X-PAYMENT-RESPONSE');
  const receipt = decodeX402Receipt(receiptHeader);
  if (receipt.type !== 'decoded') return t.fail(receipt.reason);
  t.true(receipt.value.success);
  t.truthy(chain.receipts.get(receipt.value.txHash ?? ''));
  t.is(receipt.value.network, 'base-sepolia');
  t.true(spent(USDC.address, auth.nonce));
  t.is(chain.balanceOf(USDC.address, MERCHANT_V1) - before, PRICE);
});

/** Why x402@1's verify (or, for a replay, the settlement on chain) refuses each. */
const V1_REASON: Record<Bad, RegExp> = {
  'flipped signature byte': /^invalid_exact_evm_payload_signature /,
  'wrong EIP-712 name': /^invalid_exact_evm_payload_signature /,
  'wrong EIP-712 version': /^invalid_exact_evm_payload_signature /,
  'amount - 1': /^invalid_exact_evm_payload_authorization_value /,
  // x402@1 verify does not look at nonces: the replay passes verify and fails at settlement, on chain.
  'reused nonce': /^invalid_transaction_state .*authorization is used or canceled/,
  'expired validBefore': /^invalid_exact_evm_payload_authorization_valid_before /,
};

for (const bad of BAD) {
  test.serial(`x402 v1 (x402-express@1.2.0) refuses: ${bad}`, async (t) => {
    let reuse: Hex | undefined;
    if (bad === 'reused nonce') {
      const first = await payX402V1(v1.url + v1.paidPath);
      t.is(first.answer.status, 200, 'the original payment goes through');
      reuse = first.auth.nonce;
    }
    const before = chain.balanceOf(USDC.address, MERCHANT_V1);
    const transfers = chain.transfers.length;
    const { answer, auth } = await payX402V1(v1.url + v1.paidPath, { bad, ...(reuse === undefined ? {} : { reuse }) });
    t.is(answer.status, 402, answer.body);
    t.is(answer.headers.get(X402Headers.receipt[1]), null, 'no receipt');
    t.false(answer.body.includes('"answer"'), 'the paid content is not served');
    t.is(chain.transfers.length, transfers, 'no transfer executed');
    t.is(chain.balanceOf(USDC.address, MERCHANT_V1), before, 'no money moved');
    if (bad !== 'reused nonce') t.false(spent(USDC.address, auth.nonce));
    const last = v1.facilitatorLog[v1.facilitatorLog.length - 1];
    const reason = `${JSON.parse(answer.body).error} ${JSON.stringify(last?.response)}`;
    t.log(`x402-express said: ${reason}`);
    t.regex(reason, V1_REASON[bad], 'refused for the right reason');
  });
}

// -------------------------------------------------------------------------------------------------------------
// (c) mppx/server evm charge (which also advertises x402 v2 in the same 402)

interface MppAttempt {
  answer: Answer;
  choice: MppChoice;
  auth: TransferAuthorization;
}

/** Pays the mppx merchant with MPP. `reuseChallenge` replays a challenge already paid (its nonce is its hash). */
async function payMpp(url: string, o: { bad?: Bad; reuseChallenge?: string } = {}): Promise<MppAttempt> {
  let www = o.reuseChallenge;
  let unpaid: Answer | undefined;
  if (www === undefined) {
    unpaid = await call(url);
    if (unpaid.status !== 402) throw new Error(`expected 402, got ${unpaid.status}`);
    www = unpaid.headers.get('www-authenticate') ?? '';
  }
  const parsed = Challenge.deserializeList(www);
  if (parsed.type !== 'decoded') throw new Error(parsed.reason);
  const choice = chooseMppChallenge(parsed.value.challenges, sandbox);
  if (choice.type !== 'chosen') throw new Error(choice.message);
  let auth = mppAuthorization({ choice, from: BUYER });
  if (o.bad === 'reused nonce')
    auth = { ...auth, validBefore: auth.validBefore - 1n }; // new signature, same challenge nonce
  else auth = mutate(auth, o.bad, undefined);
  const cred = buildMppCredential({
    challenge: choice.challenge,
    chainId: choice.chainId,
    authorization: auth,
    signature: sign(auth, choice.asset, o.bad),
  });
  return { answer: await call(url, { [cred.name]: cred.value }), choice, auth };
}

test.serial('mppx evm charge: our MPP credential is accepted, Payment-Receipt read', async (t) => {
  const before = chain.balanceOf(USDC.address, MERCHANT_MPP);
  const { answer, auth, choice } = await payMpp(mpp.url + mpp.paidPath);
  t.is(answer.status, 200, answer.body);
  t.deepEqual(JSON.parse(answer.body), { answer: 42 });
  const header = answer.headers.get(Receipt.RECEIPT_HEADER);
  if (header === null) return t.fail('no Payment-Receipt');
  const receipt = Receipt.deserialize(header);
  if (receipt.type !== 'decoded') return t.fail(receipt.reason);
  t.is(receipt.value.method, 'evm');
  t.truthy(chain.receipts.get(receipt.value.txHash ?? ''));
  t.is(mpp.settled[mpp.settled.length - 1]?.reference, receipt.value.txHash);
  t.is(choice.amount, PRICE);
  t.true(spent(USDC.address, auth.nonce));
  t.is(chain.balanceOf(USDC.address, MERCHANT_MPP) - before, PRICE);
});

test.serial('mppx evm charge: its x402 v2 offer in the same 402 is accepted too (one payment, not two)', async (t) => {
  const before = chain.balanceOf(USDC.address, MERCHANT_MPP);
  const transfers = chain.transfers.length;
  const unpaid = await call(mpp.url + mpp.paidPath);
  t.is(unpaid.status, 402);
  t.truthy(unpaid.headers.get('www-authenticate'), 'MPP offered');
  const pr = decodePaymentRequiredV2(unpaid.headers.get(X402Headers.paymentRequired) ?? '');
  if (pr.type !== 'decoded') return t.fail(pr.reason);
  const choice = chooseX402Option(pr.value.accepts, sandbox);
  if (choice.type !== 'chosen') return t.fail(choice.message);
  const auth = x402Authorization({ version: 2, choice, from: BUYER });
  const cred = buildX402Payment({
    version: 2,
    option: choice.option,
    resource: pr.value.resource,
    extensions: pr.value.extensions,
    authorization: auth,
    signature: signAuthorization(BUYER_KEY, auth, choice.asset, CHAIN_ID),
  });
  const answer = await call(mpp.url + mpp.paidPath, { [cred.name]: cred.value });
  t.is(answer.status, 200, answer.body);
  const receipt = decodeX402Receipt(answer.headers.get(X402Headers.receipt[2]) ?? '');
  if (receipt.type !== 'decoded') return t.fail(receipt.reason);
  t.truthy(chain.receipts.get(receipt.value.txHash ?? ''));
  t.is(chain.transfers.length, transfers + 1, 'exactly one transfer');
  t.is(chain.balanceOf(USDC.address, MERCHANT_MPP) - before, PRICE);
});

/** Why mppx's evm charge refuses each (its VerificationFailedError reasons; a replay reverts at settlement). */
const MPP_REASON: Record<Bad, RegExp> = {
  'flipped signature byte': /EVM authorization signature mismatch/,
  'wrong EIP-712 name': /EVM authorization signature mismatch/,
  'wrong EIP-712 version': /EVM authorization signature mismatch/,
  'amount - 1': /EVM authorization amount mismatch/,
  'reused nonce': /authorization is used or canceled/,
  'expired validBefore': /EVM authorization has expired/,
};

for (const bad of BAD) {
  test.serial(`mppx evm charge refuses: ${bad}`, async (t) => {
    let reuseChallenge: string | undefined;
    if (bad === 'reused nonce') {
      const unpaid = await call(mpp.url + mpp.paidPath);
      reuseChallenge = unpaid.headers.get('www-authenticate') ?? '';
      const first = await payMpp(mpp.url + mpp.paidPath, { reuseChallenge });
      t.is(first.answer.status, 200, 'the original payment goes through');
    }
    const before = chain.balanceOf(USDC.address, MERCHANT_MPP);
    const transfers = chain.transfers.length;
    const { answer, auth } = await payMpp(mpp.url + mpp.paidPath, {
      bad,
      ...(reuseChallenge === undefined ? {} : { reuseChallenge }),
    });
    t.is(answer.status, 402, answer.body);
    t.is(answer.headers.get(Receipt.RECEIPT_HEADER), null, 'no receipt');
    t.false(answer.body.includes('"answer"'), 'the paid content is not served');
    t.is(chain.transfers.length, transfers, 'no transfer executed');
    t.is(chain.balanceOf(USDC.address, MERCHANT_MPP), before, 'no money moved');
    if (bad !== 'reused nonce') t.false(spent(USDC.address, auth.nonce));
    const detail = String(JSON.parse(answer.body).detail);
    t.log(`mppx said: ${detail}`);
    t.regex(detail, MPP_REASON[bad], 'refused for the right reason');
  });
}

// -------------------------------------------------------------------------------------------------------------
// The router's one-call path (shared/protocols/payment.ts: detect, choose, sign, build) against each merchant

const headerOf = (a: Answer) => (name: string) => a.headers.get(name) ?? undefined;

for (const [name, merchant, receiptHeader, expected] of [
  ['x402 v2 (@x402/express)', () => v2, X402Headers.receipt[2], { protocol: 'x402', x402Version: 2 }],
  ['x402 v1 (x402-express@1.2.0)', () => v1, X402Headers.receipt[1], { protocol: 'x402', x402Version: 1 }],
  // mppx offers MPP and x402 v2 in one 402: the rule is x402 when fundable, never both.
  ['mppx evm charge', () => mpp, X402Headers.receipt[2], { protocol: 'x402', x402Version: 2 }],
] as const) {
  test.serial(`choosePayment + signPayment pay ${name}`, async (t) => {
    const m = merchant();
    const transfers = chain.transfers.length;
    const unpaid = await call(m.url + m.paidPath);
    t.is(unpaid.status, 402);
    const choice = choosePayment({ header: headerOf(unpaid), body: unpaid.body }, sandbox);
    if (choice.type === 'none') return t.fail(choice.message);
    const paid = signPayment(choice, { address: BUYER, privateKey: BUYER_KEY });
    t.like(paid, expected);
    t.is(paid.settlement.amount, PRICE);
    const answer = await call(m.url + m.paidPath, { [paid.header.name]: paid.header.value });
    t.is(answer.status, 200, answer.body);
    const receipt = decodeX402Receipt(answer.headers.get(receiptHeader) ?? '');
    t.truthy(receipt.type === 'decoded' && chain.receipts.get(receipt.value.txHash ?? ''));
    t.is(chain.transfers.length, transfers + 1, 'one payment');
    t.is(getAddress(chain.transfers[chain.transfers.length - 1]?.to ?? '0x0'), getAddress(paid.settlement.recipient));
  });
}

test.serial('choosePayment pays the mppx merchant by MPP when its x402 offer is not fundable', async (t) => {
  const unpaid = await call(mpp.url + mpp.paidPath);
  // Strip the x402 offer, as if its network were not funded here: MPP is the fallback.
  const choice = choosePayment(
    {
      header: (n) => (n.toLowerCase() === 'payment-required' ? undefined : (unpaid.headers.get(n) ?? undefined)),
      body: unpaid.body,
    },
    sandbox,
  );
  if (choice.type === 'none') return t.fail(choice.message);
  t.is(choice.type, 'mpp');
  const paid = signPayment(choice, { address: BUYER, privateKey: BUYER_KEY });
  t.is(paid.header.name, 'Authorization');
  const answer = await call(mpp.url + mpp.paidPath, { [paid.header.name]: paid.header.value });
  t.is(answer.status, 200, answer.body);
  const receipt = Receipt.deserialize(answer.headers.get(Receipt.RECEIPT_HEADER) ?? '');
  t.truthy(receipt.type === 'decoded' && chain.receipts.get(receipt.value.txHash ?? ''));
});

// -------------------------------------------------------------------------------------------------------------
// A signature that does not even recover (r = 0): refused by all three, no money moves. (mppx answers 500
// "internal payment error" here — viem's recovery throws before its VerificationFailedError — the others 402.)

test.serial('a signature with r = 0 is refused by every merchant and moves no money', async (t) => {
  const b64 = (v: string) => Buffer.from(v, 'base64').toString('utf8');
  const toB64 = (v: string) => Buffer.from(v, 'utf8').toString('base64');
  const b64url = (v: string) => Buffer.from(v.slice('Payment '.length), 'base64url').toString('utf8');
  const toB64url = (v: string) => `Payment ${Buffer.from(v, 'utf8').toString('base64url')}`;
  const transfers = chain.transfers.length;
  const statuses: number[] = [];
  for (const m of [v2, v1]) {
    const unpaid = await call(m.url + m.paidPath);
    const choice = choosePayment({ header: headerOf(unpaid), body: unpaid.body }, sandbox);
    if (choice.type === 'none') return t.fail(choice.message);
    const paid = signPayment(choice, { address: BUYER, privateKey: BUYER_KEY });
    const broken = zeroR(paid.header.value, b64, toB64, (o) => o.payload);
    const answer = await call(m.url + m.paidPath, { [paid.header.name]: broken });
    statuses.push(answer.status);
    t.false(answer.body.includes('"answer"'));
  }
  const unpaid = await call(mpp.url + mpp.paidPath);
  const parsed = Challenge.deserializeList(unpaid.headers.get('www-authenticate') ?? '');
  if (parsed.type !== 'decoded') return t.fail(parsed.reason);
  const choice = chooseMppChallenge(parsed.value.challenges, sandbox);
  if (choice.type !== 'chosen') return t.fail(choice.message);
  const paid = signPayment({ type: 'mpp', choice }, { address: BUYER, privateKey: BUYER_KEY });
  const broken = zeroR(paid.header.value, b64url, toB64url, (o) => o.payload);
  const answer = await call(mpp.url + mpp.paidPath, { [paid.header.name]: broken });
  statuses.push(answer.status);
  t.false(answer.body.includes('"answer"'));
  t.deepEqual(statuses.slice(0, 2), [402, 402]);
  t.true(statuses[2] === 402 || statuses[2] === 500, `mppx: ${statuses[2]}`);
  t.is(chain.transfers.length, transfers, 'no transfer executed');
});
