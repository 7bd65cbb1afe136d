// Payees that are never paid: an offer whose payTo / recipient is the zero address or the paying wallet itself is
// refused with 400 BCK.ROUTER.0001 naming why, unpaid (no payment row, no cap charge, no ledger movement, nothing
// sent to the merchant), in mode A (/router/payments), mode B (/router/route) and the streaming /router/proxy, for
// the official x402 v2, x402 v1 and mppx (MPP) merchants. When the offer lists another option, that one is paid.
import test, { type ExecutionContext } from 'ava';
import { TokenLedger } from '../../shared/db/entities/index.js';
import { decodePaymentRequiredV2 } from '../../shared/protocols/x402-decode.js';
import type { ApiResponse } from '../support/http.js';
import { StubChain } from '../support/merchants/chain.js';
import { MERCHANT_MPP, MERCHANT_V2 } from '../support/merchants/fixtures.js';
import { type MppxMerchant, startMppxMerchant } from '../support/merchants/mppx.js';
import { startX402V1Merchant } from '../support/merchants/x402-v1.js';
import { type X402V2Merchant, startX402V2Merchant } from '../support/merchants/x402-v2.js';
import { forEachDb } from '../support/matrix.js';
import {
  CHAIN_ID,
  EURC,
  PAID_ENV,
  type ScriptedMerchant,
  USDC,
  type User,
  createDelegation,
  delegationRow,
  delegationTransactions,
  fund,
  ledgerBalance,
  mppOnlyMerchant,
  paymentRows,
  scriptedMerchant,
} from '../support/router-fixtures.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const PRICE = 10_000n;
const FUNDS = 100_000_000n;
const chain = new StubChain(CHAIN_ID, [USDC, EURC]);

interface Paying {
  /** Each protocol's paid URL and the mode A target the caller would build from its 402. */
  readonly cases: readonly {
    readonly name: string;
    readonly url: string;
    readonly protocol: 'x402' | 'mpp';
    target(): Promise<Record<string, unknown>>;
  }[];
  readonly mpp: MppxMerchant;
  close(): Promise<void>;
}

/** The three official-library merchants, every one paying `payTo`; MPP also behind a relay that drops its x402. */
async function merchantsPaying(payTo: `0x${string}`): Promise<Paying> {
  const v2 = await startX402V2Merchant({ chain, payTo, usdcAmount: PRICE.toString(), usdc: USDC, eurc: EURC });
  const v1 = await startX402V1Merchant({ chain, payTo, usdcAmount: PRICE.toString(), usdc: USDC });
  const mpp = await startMppxMerchant({ chain, recipient: payTo, amount: '0.01' });
  const mppOnly = await mppOnlyMerchant(mpp);
  return {
    cases: [
      { name: 'x402 v2', url: v2.url + v2.paidPath, protocol: 'x402', target: () => v2Target(v2) },
      {
        name: 'x402 v1',
        url: v1.url + v1.paidPath,
        protocol: 'x402',
        target: async () => {
          const body = (await (await fetch(v1.url + v1.paidPath)).json()) as { accepts: unknown[] };
          return { x402Version: 1, accepts: body.accepts };
        },
      },
      { name: 'mpp', url: `${mppOnly.url}/paid`, protocol: 'mpp', target: () => mppTarget(mpp) },
      // mppx offers x402 v2 and MPP in one 402: both name the payee, so neither may be paid.
      { name: 'mppx (x402 and MPP)', url: mpp.url + mpp.paidPath, protocol: 'mpp', target: () => mppTarget(mpp) },
    ],
    mpp,
    close: async () => {
      await Promise.all([v2.close(), v1.close(), mpp.close(), mppOnly.close()]);
    },
  };
}

async function v2Target(v2: X402V2Merchant): Promise<{ accepts: Record<string, unknown>[] }> {
  const pr = decodePaymentRequiredV2((await fetch(v2.url + v2.paidPath)).headers.get('payment-required') ?? '');
  if (pr.type !== 'decoded') throw new Error(pr.reason);
  return { accepts: pr.value.accepts as Record<string, unknown>[] };
}

async function mppTarget(mpp: MppxMerchant): Promise<{ challenge: string }> {
  return { challenge: (await fetch(mpp.url + mpp.paidPath)).headers.get('www-authenticate') ?? '' };
}

let zero: Paying;
let good: X402V2Merchant;
let goodMpp: MppxMerchant;
/**
 * The good v2 merchant behind a relay whose 402 puts first a copy of the merchant's USDC option that pays the
 * address in the query (`/paid?payTo=0x...`); the paid call goes to the merchant itself.
 */
let twoPayees: ScriptedMerchant;

test.before(async () => {
  zero = await merchantsPaying(ZERO_ADDRESS);
  good = await startX402V2Merchant({ chain, payTo: MERCHANT_V2, usdcAmount: PRICE.toString(), usdc: USDC, eurc: EURC });
  goodMpp = await startMppxMerchant({ chain, recipient: MERCHANT_MPP, amount: '0.01' });
  twoPayees = await scriptedMerchant(async (req, res) => {
    const signature = req.headers['payment-signature'];
    if (typeof signature !== 'string') {
      const { accepts } = await v2Target(good);
      const usdc = accepts.find((o) => String(o.asset).toLowerCase() === USDC.address.toLowerCase());
      const payTo = new URL(req.url ?? '/', 'http://relay.test').searchParams.get('payTo');
      const offer = { x402Version: 2, accepts: [{ ...usdc, payTo }, ...accepts] };
      res.writeHead(402, { 'payment-required': Buffer.from(JSON.stringify(offer)).toString('base64') });
      res.end('{}');
      return;
    }
    const paid = await fetch(good.url + good.paidPath, { headers: { 'payment-signature': signature } });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const receipt = paid.headers.get('payment-response');
    if (receipt !== null) headers['payment-response'] = receipt;
    res.writeHead(paid.status, headers);
    res.end(await paid.text());
  });
});

test.after.always(async () => {
  await Promise.all([zero?.close(), good?.close(), goodMpp?.close(), twoPayees?.close()]);
});

let n = 0;
const rid = () => `payee-${Date.now()}-${++n}`;

forEachDb(({ stack, test }) => {
  async function paidUser() {
    const u = await stack().user();
    await fund(stack(), chain, u, FUNDS);
    return { u, delegationId: await createDelegation(u, 1000) };
  }

  /** The three ways to pay one offer, each with a new requestId. */
  function calls(u: User, delegationId: string, c: Paying['cases'][number]) {
    return [
      {
        mode: 'route',
        call: () => u.api.post('/router/route', { requestId: rid(), delegationId, url: c.url, method: 'GET' }),
      },
      {
        mode: 'proxy',
        call: () =>
          u.api.call('GET', '/router/proxy', undefined, {
            'x-router-target-url': c.url,
            'x-router-delegation-id': delegationId,
            'x-router-request-id': rid(),
          }),
      },
      {
        mode: 'payments',
        call: async () =>
          u.api.post('/router/payments', {
            requestId: rid(),
            delegationId,
            protocol: c.protocol,
            target: await c.target(),
          }),
      },
    ] as const;
  }

  /** Nothing was paid: no payment row, the cap untouched, the wallet's only ledger row its faucet credit. */
  async function assertUnpaid(t: ExecutionContext, u: User, delegationId: string) {
    t.deepEqual(await paymentRows(stack(), u.userId), [], 'no payment row');
    t.is((await delegationRow(stack(), delegationId)).amountSpentCents, 0n, 'no cap charge');
    t.deepEqual(await delegationTransactions(stack(), delegationId), [], 'no delegation_transaction row');
    t.is(await ledgerBalance(stack(), u.walletAddress), FUNDS);
    const rows = await stack().ctx.db.em().find(TokenLedger, { address: u.walletAddress });
    t.deepEqual(
      rows.map((r) => r.kind),
      ['faucet'],
      'no ledger movement',
    );
    t.false(
      chain.transfers.some((x) => x.from.toLowerCase() === u.walletAddress.toLowerCase()),
      'nothing reached a merchant',
    );
  }

  function assertRefused(t: ExecutionContext, r: ApiResponse<any>, reason: string, label: string) {
    t.is(r.status, 400, `${label}: ${r.text}`);
    t.is(r.body.code, 'BCK.ROUTER.0001', label);
    t.is(JSON.parse(r.body.params).reason, reason, label);
    t.true(String(r.body.details).includes(reason), `${label}: ${r.body.details}`);
  }

  test('payTo / recipient = the zero address: 400 BCK.ROUTER.0001, unpaid, in every mode and protocol', async (t) => {
    const { u, delegationId } = await paidUser();
    for (const c of zero.cases) {
      for (const { mode, call } of calls(u, delegationId, c)) {
        assertRefused(t, await call(), 'payee_zero_address', `${c.name} ${mode}`);
      }
    }
    await assertUnpaid(t, u, delegationId);
  });

  test('payTo / recipient = the paying wallet: 400 BCK.ROUTER.0001, unpaid, in every mode and protocol', async (t) => {
    const { u, delegationId } = await paidUser();
    // The merchants are the caller's own wallet's: started for this user.
    const self = await merchantsPaying(u.walletAddress as `0x${string}`);
    t.teardown(() => self.close());
    for (const c of self.cases) {
      for (const { mode, call } of calls(u, delegationId, c)) {
        assertRefused(t, await call(), 'payee_is_payer', `${c.name} ${mode}`);
      }
    }
    await assertUnpaid(t, u, delegationId);
    // Another user's wallet is a payee like any other: the same merchants are paid by someone else.
    const other = await paidUser();
    const paid = await other.u.api.post('/router/route', {
      requestId: rid(),
      delegationId: other.delegationId,
      url: self.cases[0]?.url,
      method: 'GET',
    });
    t.is(paid.status, 200, paid.text);
    t.like(paid.body, { paid: true, payment: { status: 'Settled', settlement: { recipient: u.walletAddress } } });
  });

  test('an offer listing such a payee and a good one: the good option is paid (route, payments; x402 and MPP)', async (t) => {
    const { u, delegationId } = await paidUser();
    for (const bad of [ZERO_ADDRESS, u.walletAddress]) {
      // Mode B against the relay: its first USDC option pays `bad`, the merchant's own USDC option comes after.
      const routed = await u.api.post('/router/route', {
        requestId: rid(),
        delegationId,
        url: `${twoPayees.url}/paid?payTo=${bad}`,
        method: 'GET',
      });
      t.is(routed.status, 200, routed.text);
      t.like(routed.body, { status: 200, paid: true, payment: { settlement: { recipient: MERCHANT_V2 } } });
      t.is(routed.body.payment.status, 'Settled', JSON.stringify(routed.body.payment));

      // Mode A: the same offer as a target; the minted credential is accepted by the merchant.
      const { accepts } = await v2Target(good);
      const usdc = accepts.find((o) => String(o.asset).toLowerCase() === USDC.address.toLowerCase());
      const minted = await u.api.post('/router/payments', {
        requestId: rid(),
        delegationId,
        protocol: 'x402',
        target: { accepts: [{ ...usdc, payTo: bad }, ...accepts] },
      });
      t.is(minted.status, 200, minted.text);
      t.is(minted.body.settlement.recipient, MERCHANT_V2);
      const answer = await fetch(good.url + good.paidPath, {
        headers: { [minted.body.credential.name]: minted.body.credential.value },
      });
      t.is(answer.status, 200, await answer.text());
    }
    // MPP: a challenge paying the zero address next to the good merchant's; the good one is paid and accepted.
    const { challenge: bad } = await mppTarget(zero.mpp);
    const { challenge: ok } = await mppTarget(goodMpp);
    const minted = await u.api.post('/router/payments', {
      requestId: rid(),
      delegationId,
      protocol: 'mpp',
      target: { challenge: `${bad}, ${ok}` },
    });
    t.is(minted.status, 200, minted.text);
    t.is(minted.body.settlement.recipient, MERCHANT_MPP);
    const answer = await fetch(goodMpp.url + goodMpp.paidPath, {
      headers: { [minted.body.credential.name]: minted.body.credential.value },
    });
    t.is(answer.status, 200, await answer.text());
  });
}, PAID_ENV);
