import { type Address, type Hex, getAddress, parseEther, parseGwei } from 'viem';
import { collectFeesOnce } from '../../admin/jobs/chain-fee-collector.js';
import { reconcileOnce } from '../../admin/jobs/chain-reconciler.js';
import { ensureOperatorWallet } from '../../shared/accounts/service-wallets.js';
import { ChainReservation, RouterPayment } from '../../shared/db/entities/index.js';
import { chainClientOf } from '../../shared/settlement/backend.js';
import { OperatorCannotPay } from '../../shared/settlement/chain/client.js';
import { type Anvil, type TokenHandle, chainTime, fundGas, mine } from '../support/anvil.js';
import { CHAIN_ENV, useChainMerchant } from '../support/chain-merchant.js';
import { forEachDb } from '../support/matrix.js';
import { until } from '../support/processes.js';
import type { X402V2Merchant } from '../support/merchants/x402-v2.js';
import { FEE_RECIPIENT, createDelegation } from '../support/router-fixtures.js';
import type { Stack } from '../support/stack.js';

const PRICE = 10_000n; // fee 500 (5%): 10,500 reserved per payment
const FEE = 500n;
const FUNDED = 1_000_000n;

let anvil: Anvil;
let usdc: TokenHandle;
let merchant: X402V2Merchant;
/** Read by forEachDb's stacks when they start (after this file's own `before`, registered first). */
const env: Record<string, string> = {
  ...CHAIN_ENV,
  // The admin process's reconciler and collector never run during the test (see the header).
  CHAIN_RECONCILE_INTERVAL_MS: '3600000',
};

useChainMerchant(PRICE, env, (c) => {
  ({ anvil, usdc, merchant } = c);
});

let n = 0;
const rid = () => `fee-reauth-${Date.now()}-${++n}`;

const payment = (s: Stack, id: string) => s.ctx.db.em().findOneOrFail(RouterPayment, { id });
const reservation = (s: Stack, id: string) => s.ctx.db.em().findOne(ChainReservation, { id });

forEachDb(
  ({ stack, test }) => {
    function chain() {
      const s = stack().ctx.config.settlement;
      if (s.backend !== 'rpc') throw new Error('not rpc');
      return chainClientOf(stack().ctx.config, s.rpcUrl);
    }

    test('a fee leg whose authorization expired unsent (operator without gas) is collected with a new one, once', async (t) => {
      const operator = getAddress(await ensureOperatorWallet(stack().ctx));
      const u = await stack().user();
      await usdc.mint(u.walletAddress as Address, FUNDED);
      const delegationId = await createDelegation(u, 1000);
      const feeBefore = await usdc.balanceOf(FEE_RECIPIENT);
      await fundGas(anvil, operator, 0n);
      // Gas must cost something: empty blocks lower the base fee (EIP-1559) towards zero, where a wallet without
      // coin could still send. No block is mined until the refusal is seen.
      await anvil.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei('1') });
      await mine(anvil);
      let beforeClockMoved: Hex | undefined;
      try {
        const r = await u.api.post('/router/route', {
          requestId: rid(),
          delegationId,
          url: merchant.url + merchant.paidPath,
        });
        t.is(r.status, 200, r.text);
        t.is(r.body.payment.status, 'Settled');
        const id = r.body.payment.paymentId as string;
        const feeId = `${id}:fee`;
        const client = chain();
        // Empty blocks are not mined while the operator has no gas (see above): the reconciler reads the newest.
        await until('the merchant leg spent', async () => {
          await reconcileOnce(stack().ctx, client);
          const x = await reservation(stack(), id);
          return x?.status === 'spent' || x?.status === 'reflected';
        });

        // The first run writes the authorization, then cannot send it.
        let refusal: unknown;
        await until('the collector refused', async () => {
          refusal = await collectFeesOnce(stack().ctx, client).then(
            () => undefined,
            (e: unknown) => e,
          );
          return refusal !== undefined;
        });
        t.true(refusal instanceof OperatorCannotPay, String(refusal));
        const first = await reservation(stack(), feeId);
        t.is(first?.status, 'open', 'the fee stays reserved for a later run');
        const firstNonce = first?.authNonce ?? null;
        const firstValidBefore = first?.validBefore ?? null;
        if (firstNonce === null || firstValidBefore === null) throw new Error('no fee authorization written');
        t.regex(firstNonce, /^0x[0-9a-f]{64}$/i);
        t.is((await payment(stack(), id)).feeTxHash, null);

        // The chain's clock passes that validBefore: the written authorization can never be used.
        beforeClockMoved = await anvil.testClient.snapshot();
        await anvil.testClient.setNextBlockTimestamp({ timestamp: firstValidBefore + 1n });
        await mine(anvil);
        t.true((await chainTime(anvil)) >= firstValidBefore);
        await fundGas(anvil, operator, parseEther('10'));
        await until(
          'the fee collected',
          async () => (await collectFeesOnce(stack().ctx, client)).collected > 0,
          30_000,
        );

        const done = await payment(stack(), id);
        t.regex(done.feeTxHash ?? '', /^0x[0-9a-f]{64}$/);
        t.is(done.feeStatus, 'settled');
        const feeReceipt = await anvil.publicClient.getTransactionReceipt({ hash: done.feeTxHash as Hex });
        t.is(feeReceipt.status, 'success');
        t.is(getAddress(feeReceipt.from), operator);
        const after = await reservation(stack(), feeId);
        t.true(after?.status === 'spent' || after?.status === 'reflected', String(after?.status));
        t.regex(after?.authNonce ?? '', /^0x[0-9a-f]{64}$/i);
        t.not(
          after?.authNonce?.toLowerCase(),
          firstNonce.toLowerCase(),
          'a new authorization replaced the expired one',
        );
        t.true((after?.validBefore ?? 0n) > firstValidBefore);
        t.true(await usdc.authorizationState(u.walletAddress as Address, after?.authNonce as Hex));
        t.false(await usdc.authorizationState(u.walletAddress as Address, firstNonce as Hex));
        // The fee moved once: the recipient got it exactly, the buyer paid the merchant and the fee, nothing more.
        t.is((await usdc.balanceOf(FEE_RECIPIENT)) - feeBefore, FEE);
        t.is(await usdc.balanceOf(u.walletAddress as Address), FUNDED - PRICE - FEE);
        // A later run finds nothing left to collect.
        t.deepEqual(await collectFeesOnce(stack().ctx, client), { collected: 0, refused: 0 });
      } finally {
        // The router signs merchant authorizations against the wall clock: a chain left ahead of it would see the
        // next database's payments expired. Going back also undoes this test's transfers, which nothing reads again.
        if (beforeClockMoved !== undefined) await anvil.testClient.revert({ id: beforeClockMoved });
        await fundGas(anvil, operator, parseEther('10'));
      }
    });
  },
  env,
  { serial: true },
);
