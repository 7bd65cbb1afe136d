// Mode B end to end (router flow steps 1-8, docs/architecture.md): POST /api/v1/router/route through the real proxy process against the
// official-library merchants (test/support/merchants/), on SQLite and PostgreSQL. Each paid call is checked
// against the record, the delegation's cap, its transaction rows and the internal token ledger.
import { getAddress } from 'viem';
import { addCatalogEntry } from '../../shared/catalog/entries.js';
import { MERCHANT_MPP, MERCHANT_V1, MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { type X402V2Merchant, startX402V2Merchant } from '../support/merchants/x402-v2.js';
import { startMppxHeaderMerchant } from '../support/merchants/mppx-header.js';
import { startMppxMerchant } from '../support/merchants/mppx.js';
import * as MppCredential from '../../shared/protocols/mpp/credential.js';
import { forEachDb } from '../support/matrix.js';
import {
  EURC,
  FEE_RECIPIENT,
  type Merchants,
  PAID_ENV,
  type ScriptedMerchant,
  USDC,
  createDelegation,
  delegationRow,
  delegationTransactions,
  fourOhTwoAgainMerchant,
  mppOnlyMerchant,
  fund,
  ledgerBalance,
  paymentRow,
  paymentRows,
  scriptedMerchant,
  startMerchants,
  ledgerMoves,
} from '../support/router-fixtures.js';
import test from 'ava';

const PRICE = 10_000n; // 0.01 USDC: fee 500 atomic, cap charge ceil(10,500 / 10,000) = 2 cents
let m: Merchants;
let again: ScriptedMerchant;
let redirect: ScriptedMerchant;
let mppOnly: ScriptedMerchant;
/**
 * 402 (the v2 merchant's requirements) unpaid; on the paid hop: /cut drops the connection, /huge declares a 200 MB
 * answer, anything else answers 200 without a receipt.
 */
let flaky: ScriptedMerchant;
const priced = new Map<bigint, X402V2Merchant>();
const PRICES = [19n, 12_345n, 1_000_000n, 1_234_567n];

test.before(async () => {
  m = await startMerchants(PRICE);
  again = await fourOhTwoAgainMerchant(m.v2);
  mppOnly = await mppOnlyMerchant(m.mpp);
  const required = (await fetch(m.v2.url + m.v2.paidPath)).headers.get('payment-required') ?? '';
  flaky = await scriptedMerchant((req, res) => {
    if (req.headers['payment-signature'] === undefined) {
      res.writeHead(402, { 'payment-required': required });
      res.end('{}');
    } else if (req.url === '/cut') {
      res.socket?.destroy();
    } else if (req.url === '/huge') {
      // Declares more than any answer the router takes: the paid hop is refused before a byte of it is read.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200000000' });
      setTimeout(() => res.socket?.destroy(), 2_000).unref();
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'payment-response': 'not-a-receipt' });
      res.end('{"ok":true}');
    }
  });
  redirect = await scriptedMerchant((_req, res) => {
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
    res.end();
  });
  for (const p of PRICES) {
    priced.set(
      p,
      await startX402V2Merchant({
        chain: m.chain,
        payTo: MERCHANT_V2,
        usdcAmount: p.toString(),
        usdc: USDC,
        eurc: EURC,
      }),
    );
  }
});

test.after.always(async () => {
  await Promise.all([
    m?.close(),
    again?.close(),
    redirect?.close(),
    mppOnly?.close(),
    flaky?.close(),
    ...[...priced.values()].map((x) => x.close()),
  ]);
});

const USDC_MERCHANT_OF_AGAIN = getAddress(MERCHANT_V2);
const transfersFrom = (addr: string) => m.chain.transfers.filter((x) => x.from.toLowerCase() === addr.toLowerCase());

let n = 0;
const rid = () => `req-${Date.now()}-${++n}`;

forEachDb(({ stack, test }) => {
  const movesOf = (paymentId: string) => ledgerMoves(stack(), paymentId);

  async function paidUser(limitCents = 1000, amount = 100_000_000n, extra: Record<string, unknown> = {}) {
    const u = await stack().user();
    await fund(stack(), m.chain, u, amount);
    const delegationId = await createDelegation(u, limitCents, extra);
    return { u, delegationId };
  }

  test('x402 v2 (@x402/express): paid, exact response shape, record, cap, transactions and ledger moves', async (t) => {
    const { u, delegationId } = await paidUser();
    const merchantBefore = await ledgerBalance(stack(), MERCHANT_V2);
    const feeBefore = await ledgerBalance(stack(), FEE_RECIPIENT);
    const requestId = rid();
    const r = await u.api.post('/router/route', { requestId, delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(r.status, 200, r.text);
    t.deepEqual(Object.keys(r.body).sort(), ['body', 'paid', 'payment', 'status']);
    t.is(r.body.status, 200);
    t.deepEqual(r.body.body, { answer: 42 });
    t.true(r.body.paid);
    const p = r.body.payment;
    t.deepEqual(Object.keys(p).sort(), ['fee', 'paymentId', 'settlement', 'status', 'txHash']);
    t.deepEqual(p.settlement, {
      recipient: getAddress(MERCHANT_V2),
      amount: '10000',
      network: 'eip155:84532',
      approxCents: '1',
      asset: USDC.address,
      scheme: 'exact',
    });
    t.deepEqual(p.fee, { bps: 500, amount: '500', cents: '1', capChargedCents: '2' });
    t.is(p.status, 'Settled');
    t.regex(p.txHash, /^0x[0-9a-f]{64}$/);
    // The merchant's library settled on its chain (USDC preferred over the EURC it offers first).
    t.deepEqual(
      transfersFrom(u.walletAddress).map((x) => [x.to, x.value]),
      [[getAddress(MERCHANT_V2), PRICE]],
    );

    const row = await paymentRow(stack(), p.paymentId);
    t.like(row, {
      userId: u.userId,
      requestId,
      delegationId,
      mode: 'route',
      protocol: 'x402',
      x402Version: 2,
      status: 'Settled',
      txHash: p.txHash,
      amount: PRICE,
      feeAmount: 500n,
      capChargedCents: 2n,
      feeStatus: 'settled',
      feeRecipient: FEE_RECIPIENT,
    });
    const d = await delegationRow(stack(), delegationId);
    t.is(d.amountSpentCents, 2n);
    const txs = await delegationTransactions(stack(), delegationId);
    t.deepEqual(
      txs.map((x) => [x.kind, x.amountCents, x.reference]),
      [['reserve', 2n, p.paymentId]],
    );
    // Ledger: buyer -> merchant (price), buyer -> fee recipient (fee).
    t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n - PRICE - 500n);
    // (Other tests pay the same merchant concurrently: the journal rows of this payment say who got what.)
    t.deepEqual(await movesOf(p.paymentId), [
      ['router', u.walletAddress, getAddress(MERCHANT_V2), PRICE],
      ['router_fee', u.walletAddress, FEE_RECIPIENT, 500n],
    ]);
    t.true((await ledgerBalance(stack(), MERCHANT_V2)) - merchantBefore >= PRICE);
    t.true((await ledgerBalance(stack(), FEE_RECIPIENT)) - feeBefore >= 500n);

    // The delegation record the user sees agrees.
    const g = await u.api.get(`/delegation/${delegationId}`);
    t.is(g.body.amountSpentCents, '2');

    // Duplicate requestId after the paid call: 409 with the original paymentId at top level and in params.
    const dup = await u.api.post('/router/route', { requestId, delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(dup.status, 409);
    t.is(dup.body.code, 'BCK.ROUTER.0002');
    t.is(dup.body.paymentId, p.paymentId);
    t.is(JSON.parse(dup.body.params).paymentId, p.paymentId);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
  });

  test('x402 v1 (x402-express@1): paid with X-PAYMENT, receipt read', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v1.url + m.v1.paidPath });
    t.is(r.status, 200, r.text);
    t.true(r.body.paid);
    t.deepEqual(r.body.body, { answer: 42 });
    t.is(r.body.payment.settlement.recipient, getAddress(MERCHANT_V1));
    t.is(r.body.payment.settlement.network, 'base-sepolia');
    t.is(r.body.payment.status, 'Settled');
    t.regex(r.body.payment.txHash, /^0x[0-9a-f]{64}$/);
    const row = await paymentRow(stack(), r.body.payment.paymentId);
    t.is(row?.x402Version, 1);
    t.true(
      m.v1.facilitatorLog.some(
        (e) => e.op === 'settle' && e.response.success === true && e.response.transaction === r.body.payment.txHash,
      ),
    );
  });

  test('mppx merchant offering MPP and x402 v2: exactly one payment (x402), never both', async (t) => {
    const { u, delegationId } = await paidUser();
    const mppBefore = m.mpp.settled.filter((x) => x.from === u.walletAddress).length;
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.mpp.url + m.mpp.paidPath });
    t.is(r.status, 200, r.text);
    t.true(r.body.paid);
    t.deepEqual(r.body.body, { answer: 42 });
    t.is(transfersFrom(u.walletAddress).length, 1, 'exactly one transfer on chain');
    t.is(r.body.payment.settlement.recipient, getAddress(MERCHANT_MPP));
    const rows = await paymentRows(stack(), u.userId);
    t.is(rows.length, 1);
    // x402 is paid when fundable (router flow step 5, docs/architecture.md); mppx answers its x402 v2 credential.
    t.is(rows[0]?.protocol, 'x402');
    // mppx settles its x402 leg through the same settle hook: one settlement, one transfer.
    t.is(m.mpp.settled.filter((x) => x.from === u.walletAddress).length - mppBefore, 1);
  });

  test('mppx merchant requiring its route binding on a scoped route: the x402 payment carries it (salted info.nonce, route-bound nonce) and is accepted', async (t) => {
    const bound = await startMppxMerchant({
      chain: m.chain,
      recipient: MERCHANT_MPP,
      amount: '0.01',
      routeBinding: 'required',
      meta: { order: 'o-42' },
    });
    try {
      const { u, delegationId } = await paidUser();
      const offer = await fetch(bound.url + bound.paidPath);
      const required = JSON.parse(
        Buffer.from(offer.headers.get('payment-required') ?? '', 'base64').toString('utf8'),
      ) as { extensions?: { mppx?: { info?: Record<string, unknown> } } };
      t.like(required.extensions?.mppx?.info, { method: 'GET' }, 'mppx advertises its binding');
      const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: bound.url + bound.paidPath });
      t.is(r.status, 200, r.text);
      t.deepEqual(r.body.body, { answer: 42 });
      t.is(r.body.payment.status, 'Settled');
      const rows = await paymentRows(stack(), u.userId);
      t.is(rows[0]?.protocol, 'x402');
      t.is(
        bound.settled.filter((x) => x.from === u.walletAddress).length,
        1,
        'mppx verified the binding and settled once',
      );
      // The route-bound nonce is not the 402's: sha256 of accepted | resource | salted extensions (hex, 32 bytes).
      t.regex(bound.settled.find((x) => x.from === u.walletAddress)?.nonce ?? '', /^0x[0-9a-f]{64}$/);
    } finally {
      await bound.close();
    }
  });

  test('EUR delegation pays EURC when the merchant offers EURC and USDC (prefer-USDC does not override the currency)', async (t) => {
    const u = await stack().user();
    await fund(stack(), m.chain, u, 100_000_000n, EURC);
    const delegationId = await createDelegation(u, 1000, { currency: 'eur' });
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(r.status, 200, r.text);
    t.is(r.body.payment.settlement.asset, EURC.address);
    t.is(r.body.payment.status, 'Settled');
    t.is(await ledgerBalance(stack(), u.walletAddress, EURC), 100_000_000n - PRICE - 500n);
    // USDC-only merchant (v1): nothing this delegation can fund -> 400, nothing reserved.
    const v1 = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v1.url + m.v1.paidPath });
    t.is(v1.status, 400, v1.text);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
  });

  test('MPP-only merchant (mppx evm charge): paid with Authorization: Payment, receipt -> Settled, no fee leg', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', {
      requestId: rid(),
      delegationId,
      url: `${mppOnly.url}${m.mpp.paidPath}`,
    });
    t.is(r.status, 200, r.text);
    t.true(r.body.paid);
    t.deepEqual(r.body.body, { answer: 42 });
    t.deepEqual(r.body.payment.fee, { bps: 0, amount: '0', cents: '0', capChargedCents: '1' });
    t.is(r.body.payment.settlement.scheme, 'charge');
    t.is(r.body.payment.settlement.recipient, getAddress(MERCHANT_MPP));
    t.is(r.body.payment.status, 'Settled');
    t.truthy(r.body.payment.txHash);
    t.true(mppOnly.seen.some((h) => String(h.authorization).startsWith('Payment ')));
    const row = await paymentRow(stack(), r.body.payment.paymentId);
    t.like(row, { protocol: 'mpp', x402Version: null, feeStatus: 'none', status: 'Settled' });
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n);
    t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n - PRICE);
    t.is(transfersFrom(u.walletAddress).length, 1);
  });

  test('free endpoint: relayed, paid:false, no payment row, no cap touched', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v2.url + m.v2.freePath });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, { status: 200, body: { free: true }, paid: false });
    t.is((await paymentRows(stack(), u.userId)).length, 0);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
    // A 404 upstream is relayed as such (status in the body), still free.
    const nf = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${m.v2.url}/nothing` });
    t.is(nf.status, 200);
    t.is(nf.body.status, 404);
    t.false(nf.body.paid);
  });

  test('merchant answering the paid hop with 402 again: Failed, fee released, merchant leg kept', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${again.url}/paid` });
    t.is(r.status, 200, r.text);
    t.is(r.body.status, 402);
    t.true(r.body.paid);
    t.is(r.body.payment.status, 'Failed');
    t.is(r.body.payment.txHash, null);
    const row = await paymentRow(stack(), r.body.payment.paymentId);
    t.is(row?.status, 'Failed');
    t.is(row?.feeStatus, 'released');
    // Cap: 2 reserved, the fee's 1 cent released -> 1 (the merchant leg, ceil(1 cent)).
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n);
    const txs = await delegationTransactions(stack(), delegationId);
    t.deepEqual(
      txs.map((x) => [x.kind, x.amountCents]),
      [
        ['reserve', 2n],
        ['release', -1n],
      ],
    );
    t.deepEqual(
      await movesOf(r.body.payment.paymentId),
      [['router', u.walletAddress, USDC_MERCHANT_OF_AGAIN, PRICE]],
      'no fee moved',
    );
    t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n - PRICE);
    t.true(
      again.seen.some((h) => h['payment-signature'] !== undefined),
      'the credential was sent',
    );
  });

  // The caller's request was fine and the payment was made: a 400 that gave the requestId back would let a retry
  // pay again, and would hide the payment from the caller.
  for (const [path, what] of [
    ['/cut', 'connection cut'],
    ['/huge', 'answer declared over the size limit'],
  ] as const) {
    test(`paid hop failing after payment (${what}): 502 naming the payment, Issued, fee released, requestId spent`, async (t) => {
      const { u, delegationId } = await paidUser();
      const requestId = rid();
      const call = { requestId, delegationId, url: `${flaky.url}${path}`, headers: { 'x-test-id': requestId } };
      const calls = () => flaky.seen.filter((h) => h['x-test-id'] === requestId).length;
      const r = await u.api.post('/router/route', call);
      t.is(r.status, 502, r.text);
      t.is(r.body.code, 'BCK.HTTP.0502');
      t.true(r.body.retryable);
      const rows = await paymentRows(stack(), u.userId);
      t.is(rows.length, 1);
      t.is(r.body.paymentId, rows[0]?.id, 'the error names the payment made for the call');
      t.like(rows[0], { status: 'Issued', feeStatus: 'released' });
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n, 'merchant leg kept, fee released');
      t.is(calls(), 2, 'the probe and the paid hop');
      const dup = await u.api.post('/router/route', call);
      t.is(dup.status, 409, dup.text);
      t.is(dup.body.paymentId, rows[0]?.id);
      t.is(calls(), 2, 'the duplicate did not call the merchant again');
    });
  }

  test('paid hop answered 200 with a malformed receipt: payment stays Issued, fee settled', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${flaky.url}/noreceipt` });
    t.is(r.status, 200, r.text);
    t.like(r.body, { status: 200, body: { ok: true }, paid: true });
    t.is(r.body.payment.status, 'Issued');
    t.is(r.body.payment.txHash, null);
    t.like(await paymentRow(stack(), r.body.payment.paymentId), { status: 'Issued', feeStatus: 'settled' });
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
  });

  test('redirect to 169.254.169.254 is not followed; relayed or refused, never 5xx', async (t) => {
    const { u, delegationId } = await paidUser();
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${redirect.url}/go` });
    t.true(r.status === 200 || r.status === 400, r.text);
    if (r.status === 200) {
      t.is(r.body.status, 302);
      t.false(r.body.paid);
    } else t.is(r.body.code, 'BCK.ROUTER.0001');
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('fee arithmetic on several prices, through real merchants', async (t) => {
    const { u, delegationId } = await paidUser(100_000, 1_000_000_000n);
    const expected: Record<string, { fee: object; approxCents: string; spent: bigint }> = {
      '19': { fee: { bps: 0, amount: '0', cents: '0', capChargedCents: '1' }, approxCents: '1', spent: 1n },
      '12345': { fee: { bps: 500, amount: '617', cents: '0', capChargedCents: '2' }, approxCents: '2', spent: 2n },
      '1000000': {
        fee: { bps: 500, amount: '50000', cents: '5', capChargedCents: '105' },
        approxCents: '100',
        spent: 105n,
      },
      // 1,234,567 + 61,728 = 1,296,295 -> 130 cents; approx ceil(123.4567) = 124.
      '1234567': {
        fee: { bps: 500, amount: '61728', cents: '6', capChargedCents: '130' },
        approxCents: '124',
        spent: 130n,
      },
    };
    let spent = 0n;
    let balance = 1_000_000_000n;
    for (const [price, merchant] of priced) {
      const r = await u.api.post('/router/route', {
        requestId: rid(),
        delegationId,
        url: merchant.url + merchant.paidPath,
      });
      t.is(r.status, 200, r.text);
      const e = expected[price.toString()];
      if (e === undefined) throw new Error('missing expectation');
      t.deepEqual(r.body.payment.fee, e.fee, `price ${price}`);
      t.is(r.body.payment.settlement.amount, price.toString());
      t.is(r.body.payment.settlement.approxCents, e.approxCents);
      t.is(r.body.payment.status, 'Settled');
      spent += e.spent;
      balance -= price + BigInt((e.fee as { amount: string }).amount);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, spent);
      t.is(await ledgerBalance(stack(), u.walletAddress), balance);
    }
  });

  test('cap exhausted -> 402 BCK.ROUTER.0003, nothing paid, requestId may be retried', async (t) => {
    const { u, delegationId } = await paidUser(3);
    const ok = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(ok.status, 200);
    const requestId = rid();
    const transfers = transfersFrom(u.walletAddress).length;
    const r = await u.api.post('/router/route', { requestId, delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(r.status, 402, r.text);
    t.is(r.body.code, 'BCK.ROUTER.0003');
    t.is(transfersFrom(u.walletAddress).length, transfers);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 2n);
    t.is((await paymentRows(stack(), u.userId)).length, 1);
    // Refused before signing: the claim was given back, so the same requestId meets the same refusal (not 409).
    const again2 = await u.api.post('/router/route', { requestId, delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(again2.body.code, 'BCK.ROUTER.0003');
  });

  test('revoked, foreign or unknown delegation -> 402 BCK.ROUTER.0003, the merchant is not paid', async (t) => {
    const { u, delegationId } = await paidUser();
    const other = await paidUser();
    t.is((await u.api.del(`/delegation/${delegationId}`)).status, 200);
    const url = m.v2.url + m.v2.paidPath;
    for (const [who, id] of [
      [u, delegationId],
      [u, other.delegationId],
      [u, '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const r = await who.api.post('/router/route', { requestId: rid(), delegationId: id, url });
      t.is(r.status, 402, r.text);
      t.is(r.body.code, 'BCK.ROUTER.0003');
    }
    t.is(transfersFrom(u.walletAddress).length, 0);
    t.is((await paymentRows(stack(), u.userId)).length, 0);
    t.is((await delegationRow(stack(), other.delegationId)).amountSpentCents, 0n);
  });

  test('buyer balance short -> 402 BCK.ROUTER.0009 with nothing reserved', async (t) => {
    const { u, delegationId } = await paidUser(1000, 5_000n);
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(r.status, 402, r.text);
    t.is(r.body.code, 'BCK.ROUTER.0009');
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
    t.deepEqual(await delegationTransactions(stack(), delegationId), []);
    t.is((await paymentRows(stack(), u.userId)).length, 0);
    t.is(await ledgerBalance(stack(), u.walletAddress), 5_000n);
    // Cap too small AND balance short: the cap (checked first in step 6) is what is reported.
    const small = await createDelegation(u, 1);
    const both = await u.api.post('/router/route', {
      requestId: rid(),
      delegationId: small,
      url: m.v2.url + m.v2.paidPath,
    });
    t.is(both.status, 402);
    t.is(both.body.code, 'BCK.ROUTER.0003');
    t.deepEqual(await delegationTransactions(stack(), small), []);
  });

  test('allowedRecipients excluding the merchant -> 400 BCK.ROUTER.0001', async (t) => {
    const { u, delegationId } = await paidUser(1000, 100_000_000n, {
      allowedRecipients: ['0x0000000000000000000000000000000000000001'],
    });
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v2.url + m.v2.paidPath });
    t.is(r.status, 400, r.text);
    t.is(r.body.code, 'BCK.ROUTER.0001');
    t.is((await paymentRows(stack(), u.userId)).length, 0);
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
  });

  test('validation: url+slug, neither, unsafe slug paths -> 400 BCK.ROUTER.0001', async (t) => {
    const { u, delegationId } = await paidUser();
    await addCatalogEntry(stack().ctx, 'safe-v2', { url: m.v2.url });
    const both = await u.api.post('/router/route', { requestId: rid(), delegationId, url: m.v2.url, slug: 'safe-v2' });
    t.is(both.status, 400);
    t.is(both.body.code, 'BCK.ROUTER.0001');
    const neither = await u.api.post('/router/route', { requestId: rid(), delegationId });
    t.is(neither.status, 400);
    for (const path of [
      '//evil.test/x',
      'a//b',
      '@evil.test',
      'a@b',
      '../admin',
      'a/../../b',
      '%2e%2e/x',
      'a%2fb',
      'http://evil.test/x',
      'https:evil',
      '\\evil',
      'a\\b',
      '%5cevil',
      '%40evil',
    ]) {
      const r = await u.api.post('/router/route', { requestId: rid(), delegationId, slug: 'safe-v2', path });
      t.is(r.status, 400, `path ${path}: ${r.text}`);
      t.is(r.body.code, 'BCK.ROUTER.0001', path);
    }
    for (const body of [
      { delegationId, url: m.v2.url },
      { requestId: rid(), url: m.v2.url },
      { requestId: rid(), delegationId: 'nope', url: m.v2.url },
    ]) {
      const r = await u.api.post('/router/route', body);
      t.is(r.status, 400, JSON.stringify(body));
    }
    t.is((await paymentRows(stack(), u.userId)).length, 0);
  });

  test('slug from the catalog resolves server-side and never shows the upstream', async (t) => {
    const { u, delegationId } = await paidUser();
    await addCatalogEntry(stack().ctx, 'weather-v2', { url: m.v2.url });
    const r = await u.api.post('/router/route', { requestId: rid(), delegationId, slug: 'weather-v2', path: '/paid' });
    t.is(r.status, 200, r.text);
    t.true(r.body.paid);
    t.deepEqual(r.body.body, { answer: 42 });
    const host = new URL(m.v2.url).host;
    t.false(r.text.includes(host), 'the route answer does not carry the upstream');
    const list = await u.api.get('/router/payments');
    t.is(list.status, 200);
    t.false(list.text.includes(host), 'the ledger does not carry the upstream');
    const unknown = await u.api.post('/router/route', { requestId: rid(), delegationId, slug: 'no-such-slug' });
    t.is(unknown.status, 400);
    t.is(unknown.body.code, 'BCK.ROUTER.0001');
    // An upstream that cannot be reached: the error names the slug, never the host, port or address.
    const closed = await scriptedMerchant((_req, res) => {
      res.end();
    });
    const closedUrl = `${closed.url}/secret-api`;
    await closed.close();
    await addCatalogEntry(stack().ctx, 'gone-v1', { url: closedUrl });
    const gone = await u.api.post('/router/route', { requestId: rid(), delegationId, slug: 'gone-v1', path: '/x' });
    t.is(gone.status, 502, gone.text);
    t.is(gone.body.code, 'BCK.HTTP.0502');
    t.false(gone.text.includes(new URL(closedUrl).host), gone.text);
    t.false(gone.text.includes('127.0.0.1'), gone.text);
    t.false(gone.text.includes('secret-api'), gone.text);
    t.regex(gone.body.details, /gone-v1/);
  });

  test('catalog add refuses a base the outbound policy refuses (metadata address), whatever ROUTER_ALLOW_PRIVATE_TARGETS', async (t) => {
    await t.throwsAsync(addCatalogEntry(stack().ctx, 'meta', { url: 'http://169.254.169.254/latest/' }), {
      message: /outbound policy/,
    });
    await t.throwsAsync(addCatalogEntry(stack().ctx, 'meta2', { url: 'http://[fd00:ec2::254]/' }), {
      message: /outbound policy/,
    });
  });

  test('MPP challenge with header="Payment-Authorization" (mppx requiresAuth): credential sent in that field, Settled, record and ledger right', async (t) => {
    const merchant = await startMppxHeaderMerchant({ chain: m.chain, recipient: MERCHANT_MPP, amount: '0.01' });
    try {
      const { u, delegationId } = await paidUser();
      const requestId = rid();
      const r = await u.api.post('/router/route', {
        requestId,
        delegationId,
        url: merchant.url + merchant.paidPath,
        // A caller-supplied field of the credential's name never reaches the merchant; ours replaces it.
        headers: { 'Payment-Authorization': 'Payment forged', 'x-caller': 'kept' },
      });
      t.is(r.status, 200, r.text);
      t.true(r.body.paid);
      t.is(r.body.status, 200);
      t.deepEqual(r.body.body, { answer: 42 });
      const p = r.body.payment;
      t.deepEqual(p.settlement, {
        recipient: getAddress(MERCHANT_MPP),
        amount: '10000',
        network: 'eip155:84532',
        approxCents: '1',
        asset: USDC.address,
        scheme: 'charge',
      });
      t.deepEqual(p.fee, { bps: 0, amount: '0', cents: '0', capChargedCents: '1' });
      t.is(p.status, 'Settled');
      t.regex(p.txHash, /^0x[0-9a-f]{64}$/);

      // What the merchant saw: the probe without a credential, then the paid call with ours in Payment-Authorization.
      t.is(merchant.seen.length, 2);
      const [probe, paid] = merchant.seen;
      t.is(probe?.['payment-authorization'], undefined);
      const sent = paid?.['payment-authorization'];
      if (typeof sent !== 'string') return t.fail('no Payment-Authorization on the paid call');
      t.not(sent, 'Payment forged');
      t.is(paid?.authorization, undefined, 'nothing in Authorization');
      t.is(paid?.['x-caller'], 'kept');
      const cred = MppCredential.deserialize(sent);
      if (cred.type !== 'decoded') return t.fail(cred.reason);
      t.is(cred.value.challenge.header, 'Payment-Authorization');
      t.is(cred.value.source, `did:pkh:eip155:84532:${getAddress(u.walletAddress)}`);
      t.deepEqual(
        merchant.settled.map((x) => [x.reference, x.from]),
        [[p.txHash, getAddress(u.walletAddress)]],
      );
      t.deepEqual(
        transfersFrom(u.walletAddress).map((x) => [x.to, x.value]),
        [[getAddress(MERCHANT_MPP), PRICE]],
      );

      const row = await paymentRow(stack(), p.paymentId);
      t.like(row, {
        userId: u.userId,
        requestId,
        delegationId,
        mode: 'route',
        protocol: 'mpp',
        x402Version: null,
        status: 'Settled',
        txHash: p.txHash,
        amount: PRICE,
        feeAmount: 0n,
        capChargedCents: 1n,
        feeStatus: 'none',
      });
      t.is((await paymentRows(stack(), u.userId)).length, 1);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 1n);
      t.deepEqual(
        (await delegationTransactions(stack(), delegationId)).map((x) => [x.kind, x.amountCents, x.reference]),
        [['reserve', 1n, p.paymentId]],
      );
      t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n - PRICE);
      t.deepEqual(await movesOf(p.paymentId), [['router', u.walletAddress, getAddress(MERCHANT_MPP), PRICE]]);
    } finally {
      await merchant.close();
    }
  });

  test('MPP challenge naming a forbidden credential field (Host, Content-Length, X-Router-*...): refused while choosing, no payment', async (t) => {
    const merchant = await startMppxHeaderMerchant({ chain: m.chain, recipient: MERCHANT_MPP, amount: '0.01' });
    const www = (await fetch(merchant.url + merchant.paidPath)).headers.get('www-authenticate') ?? '';
    t.regex(www, /header="Payment-Authorization"/);
    let field = 'Host';
    const forbidden = await scriptedMerchant((_req, res) => {
      res.writeHead(402, { 'www-authenticate': www.replace('header="Payment-Authorization"', `header="${field}"`) });
      res.end('{}');
    });
    try {
      const { u, delegationId } = await paidUser();
      for (const name of [
        'Host',
        'Content-Length',
        'Transfer-Encoding',
        'Connection',
        'Cookie',
        'X-Router-Payment-Id',
        'Content-Type',
      ]) {
        field = name;
        const r = await u.api.post('/router/route', { requestId: rid(), delegationId, url: `${forbidden.url}/paid` });
        t.is(r.status, 400, `${name}: ${r.text}`);
        t.is(r.body.code, 'BCK.ROUTER.0001', name);
        t.is(JSON.parse(r.body.params).reason, 'unsupported_credential_header', name);
      }
      t.is(forbidden.seen.length, 7, 'each call probed once, never re-sent');
      t.is((await paymentRows(stack(), u.userId)).length, 0);
      t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n);
      t.is(await ledgerBalance(stack(), u.walletAddress), 100_000_000n);
      t.is(transfersFrom(u.walletAddress).length, 0);
    } finally {
      await Promise.all([merchant.close(), forbidden.close()]);
    }
  });
}, PAID_ENV);
