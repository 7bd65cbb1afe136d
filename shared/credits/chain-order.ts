// A plan order paid on chain (SETTLEMENT_BACKEND=rpc). The buyer's custodial wallet signs one EIP-3009 transfer per
// receiver and the operator wallet sends them, all in ONE transaction (several receivers through Multicall3), paying
// the gas; the credits are minted only once that transaction succeeded, and its hash is the order's `txId`.
//   1. one database transaction: the order row (`submitting`) and the legs reserved against the wallet's on-chain
//      balance (so no router payment or other order can spend the same funds meanwhile);
//   2. the transfers are signed and sent, and their receipt awaited (CHAIN_CONFIRM_TIMEOUT_MS);
//   3. mined and succeeded: one database transaction marks the order paid (once: a conditional UPDATE from
//      `submitting`), spends the legs in its block, mints the credits and records the order.
// A refusal before sending (the operator has no gas: 503 BCK.CHAIN.0003) or a revert (409 BCK.CHAIN.0004) releases
// the legs and credits nothing. A send or a confirmation that failed for the node's sake (503 BCK.CHAIN.0001) leaves
// the order `submitting`: the transaction may still be mined, so `reconcileChainOrders` (admin process) decides from
// the chain later, exactly as step 3 would (used) or by releasing the legs (unused past validBefore).
import { randomUUID } from 'node:crypto';
import { type Address, type Hex, getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { operatorKeyOf } from '../accounts/service-wallets.js';
import { NETWORKS } from '../assets.js';
import type { ActingUser } from '../auth/caller.js';
import type { ServiceContext } from '../context.js';
import { int64 } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { fromColumn, sum, toWire } from '../money.js';
import { randomNonce, signAuthorization } from '../protocols/eip3009.js';
import type { Settlement } from '../settlement/backend.js';
import {
  type ChainClient,
  ChainUnavailable,
  OperatorCannotPay,
  type SignedTransfer,
  TransferRefused,
} from '../settlement/chain/client.js';
import { custodialKeyOf } from '../custody/custodial-key.js';
import { chainUnavailableError } from '../settlement/chain/errors.js';
import { legsOfIn, reserveIn } from '../settlement/chain/reservations.js';
import { InsufficientFunds } from '../settlement/token-ledger.js';
import type { PlanRow } from './lookup.js';
import { creditBalance } from './store/lots.js';
import { type OrderResult, walletShortError } from './order-result.js';
import { completeChainOrderIn, failChainOrderIn, insertChainOrderIn, submittingChainOrdersIn } from './store/orders.js';
import { InvariantError } from '../errors/invariant.js';

/** How long the order's authorizations are valid: sent at once, this only bounds a transaction stuck unmined. */
const ORDER_AUTH_TTL_SECS = 600n;

interface Leg {
  readonly id: string;
  readonly to: Address;
  readonly amount: bigint;
  readonly nonce: Hex;
}

export async function orderPlanOnChain(
  ctx: ServiceContext,
  settlement: Settlement,
  caller: ActingUser,
  plan: PlanRow,
): Promise<OrderResult> {
  const chain = settlement.chain;
  if (chain === undefined) throw new InvariantError('orderPlanOnChain needs the rpc backend');
  const token = NETWORKS[ctx.config.ENVIRONMENT].assets.find((a) => a.address === getAddress(plan.tokenAddress));
  if (token === undefined)
    throw new AppError('BCK.CHAIN.0004', {
      details: `plan ${plan.id} is priced in ${plan.tokenAddress}, not a token of this network`,
    });
  const payer = getAddress(caller.walletAddress);
  const orderId = randomUUID();
  const legs: Leg[] = plan.amounts
    .map((a, i) => ({ id: `${orderId}:${i}`, to: getAddress(plan.receivers[i] ?? ''), amount: fromColumn(a) }))
    .filter((l) => l.amount > 0n)
    .map((l) => ({ ...l, nonce: randomNonce() }));
  const amountPaid = sum(legs.map((l) => l.amount));
  const validBefore = BigInt(Math.floor(ctx.now().getTime() / 1000)) + ORDER_AUTH_TTL_SECS;

  await settlement.prepare(payer, token.address).catch(rethrowChain);
  const now = ctx.now();
  try {
    await ctx.db.sql.transaction(
      async (tx) => {
        await insertChainOrderIn(
          tx,
          {
            id: orderId,
            planId: plan.id,
            buyerUserId: caller.userId,
            holderAddress: caller.walletAddress,
            payerAddress: payer,
            asset: token.address,
            amountPaid,
            credits: plan.creditsAmount,
          },
          now,
        );
        const base = { address: payer, asset: token.address, kind: 'order' as const, reference: orderId, validBefore };
        await reserveIn(
          tx,
          legs.map((l) => ({ ...base, id: l.id, amount: l.amount, authNonce: l.nonce })),
          now,
        );
      },
      { serializeOn: payer },
    );
  } catch (err) {
    if (err instanceof InsufficientFunds) throw walletShortError(caller.walletAddress, plan);
    throw err;
  }

  const key = await custodialKeyOf(ctx, payer);
  const transfers: SignedTransfer[] = legs.map((l) => {
    const authorization = { from: payer, to: l.to, value: l.amount, validAfter: 0n, validBefore, nonce: l.nonce };
    return {
      token: token.address,
      ...authorization,
      signature: signAuthorization(key, authorization, token, chain.chainId),
    };
  });
  const operator = privateKeyToAccount(await operatorKeyOf(ctx));
  let mined: { txHash: Hex; blockNumber: bigint };
  try {
    mined = await chain.submitTransfers(operator, transfers, ctx.config.CHAIN_CONFIRM_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof OperatorCannotPay) {
      await failOrder(ctx, orderId, legs, err.message, undefined);
      throw new AppError('BCK.CHAIN.0003', {
        details: `${err.message}: nothing was paid or credited`,
        params: { orderId },
      });
    }
    if (err instanceof TransferRefused) {
      await failOrder(ctx, orderId, legs, err.reason, err.txHash);
      throw new AppError('BCK.CHAIN.0004', {
        details: `the order's transfer was refused on chain (${err.reason}): nothing was credited`,
        params: err.txHash === undefined ? { orderId } : { orderId, txHash: err.txHash },
      });
    }
    if (err instanceof ChainUnavailable && err.operation === 'eth_getTransactionReceipt') {
      // Sent, and not seen mined in time: it may still be. The order stays `submitting` for the reconciler.
      throw new AppError('BCK.CHAIN.0001', {
        details: `order ${orderId}: its transaction was sent but not confirmed in time; nothing is credited unless it is mined, which the service checks by itself`,
        params: { orderId },
      });
    }
    throw rethrowChain(err);
  }
  // False only when the reconciler finished it first, from the same transaction: the answer is the same.
  await completeOrder(
    ctx,
    orderId,
    legs.map((l) => l.id),
    mined,
  );
  const balance = await creditBalance(ctx.db.em(), plan.id, caller.walletAddress, ctx.now());
  return {
    orderId,
    planId: String(plan.id),
    holderAddress: caller.walletAddress,
    creditsGranted: toWire(plan.creditsAmount),
    amountPaid: toWire(amountPaid),
    asset: token.address,
    txId: mined.txHash,
    balance: toWire(balance),
  };
}

function rethrowChain(err: unknown): never {
  throw err instanceof ChainUnavailable ? chainUnavailableError(err) : err;
}

/** Step 3, once (store: completeChainOrderIn); false if the order was no longer `submitting`. */
async function completeOrder(
  ctx: ServiceContext,
  orderId: string,
  legIds: readonly string[],
  mined: { txHash: Hex; blockNumber: bigint },
): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.em().transactional((em) => completeChainOrderIn(em, ctx.db.dialect, orderId, legIds, mined, now));
}

/** Nothing moved on chain: the order failed, its legs released (once: only from `submitting`). */
async function failOrder(
  ctx: ServiceContext,
  orderId: string,
  legs: readonly { id: string }[],
  reason: string,
  txHash: Hex | undefined,
): Promise<void> {
  const now = ctx.now();
  await ctx.db.sql.transaction((tx) =>
    failChainOrderIn(
      tx,
      orderId,
      legs.map((l) => l.id),
      reason,
      txHash,
      now,
    ),
  );
}

/**
 * Orders left `submitting` longer than a confirmation may take (a crash, a node that did not answer): the chain
 * decides. All legs of an order are in one transaction, so its first leg's authorization tells: used -> the
 * order is completed exactly as the request would have; unused once a block's time reached validBefore -> failed.
 */
export async function reconcileChainOrders(ctx: ServiceContext, chain: ChainClient, max = 50): Promise<number> {
  const before = new Date(ctx.now().getTime() - ctx.config.CHAIN_CONFIRM_TIMEOUT_MS - 5000);
  const orders = await ctx.db.sql.transaction((tx) => submittingChainOrdersIn(tx, before, max));
  let finished = 0;
  if (orders.length === 0) return finished;
  const latest = await chain.latestBlock();
  for (const o of orders) {
    const orderId = String(o.id);
    const legs = await ctx.db.sql.transaction((tx) => legsOfIn(tx, orderId, 'order'));
    const [first] = legs;
    if (first === undefined) continue;
    const payer = getAddress(String(o.payer_address));
    const asset = getAddress(String(o.asset));
    const nonce = String(first.auth_nonce) as Hex;
    if (await chain.authorizationUsed(asset, payer, nonce, latest.number)) {
      const from = int64(first.from_block);
      const use = await chain.findAuthorizationUse(asset, payer, nonce, from < 0n ? 0n : from, latest.number);
      const mined = { txHash: use?.txHash ?? ('0x' as Hex), blockNumber: use?.blockNumber ?? latest.number };
      if (
        await completeOrder(
          ctx,
          orderId,
          legs.map((l) => String(l.id)),
          mined,
        )
      )
        finished += 1;
    } else if (latest.timestamp >= int64(first.valid_before)) {
      await failOrder(
        ctx,
        orderId,
        legs.map((l) => ({ id: String(l.id) })),
        'not mined before it expired',
        undefined,
      );
      finished += 1;
    }
  }
  return finished;
}
