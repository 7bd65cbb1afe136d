// The rpc backend's fee legs. A fee leg decided paid (`fee_status = 'settled'`) is still only reserved against the
// buyer's on-chain funds: the operator collects it with an EIP-3009 transfer from the buyer's custodial wallet to the
// fee recipient, paying the gas (admin process, with the reconciler). Only once the merchant leg was seen used on
// chain: a fee on a payment that never happened is never taken (it expires with it, chain-reconciler.ts).
//
// Exactly once, across crashes and processes: the transfer's nonce and validBefore are written on the reservation
// BEFORE it is sent, so a later run that finds them asks the token whether that authorization was used, instead of
// signing a second one. The same key signs the same message to the same signature (RFC 6979), so sending it again
// is harmless: the token refuses a used nonce. An authorization unused past its validBefore is replaced.
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { operatorKeyOf } from '../../shared/accounts/service-wallets.js';
import { NETWORKS } from '../../shared/assets.js';
import type { ServiceContext } from '../../shared/context.js';
import { randomNonce, signAuthorization } from '../../shared/protocols/eip3009.js';
import { giveBackCapIn } from '../../shared/router/cap-give-back.js';
import { recordFeeTransactionIn, releaseFeeStatusIn } from '../../shared/router/payment-store.js';
import type { ChainClient } from '../../shared/settlement/chain/client.js';
import { TransferRefused } from '../../shared/settlement/chain/client.js';
import { custodialKeyOf } from '../../shared/custody/custodial-key.js';
import {
  type DueFee,
  dueFeesIn,
  markSpentIn,
  releaseReservationIn,
  setFeeAuthorizationIn,
} from '../../shared/settlement/chain/reservations.js';

/** How long a fee transfer's authorization is valid: the operator sends it at once, this only bounds a stuck one. */
const FEE_AUTH_TTL_SECS = 600n;

export interface CollectResult {
  collected: number;
  refused: number;
}

/** Collects up to `max` due fee legs, one after another (one operator account: its transactions are sequential). */
export async function collectFeesOnce(ctx: ServiceContext, chain: ChainClient, max = 50): Promise<CollectResult> {
  const due = await ctx.db.sql.transaction((tx) => dueFeesIn(tx, max));
  const result: CollectResult = { collected: 0, refused: 0 };
  if (due.length === 0) return result;
  const operator = privateKeyToAccount(await operatorKeyOf(ctx));
  const asset = (address: Address) => NETWORKS[ctx.config.ENVIRONMENT].assets.find((a) => a.address === address);
  for (const row of due) {
    const fee: DueFee = row;
    const token = asset(fee.asset);
    if (token === undefined) continue;
    const latest = await chain.latestBlock();
    // An authorization written by an earlier run: used (that run's transfer was mined), or expired (sign anew).
    if (fee.nonce !== null && fee.validBefore !== null) {
      if (await chain.authorizationUsed(fee.asset, fee.buyer, fee.nonce, latest.number)) {
        const use = await chain.findAuthorizationUse(fee.asset, fee.buyer, fee.nonce, fee.fromBlock, latest.number);
        await recordCollected(ctx, fee, use ?? { txHash: '0x' as Hex, blockNumber: latest.number });
        result.collected += 1;
        continue;
      }
    }
    // The authorization to send: the earlier run's while it can still be used, else a new one written first.
    let auth: { nonce: Hex; validBefore: bigint };
    if (fee.nonce !== null && fee.validBefore !== null && latest.timestamp < fee.validBefore)
      auth = { nonce: fee.nonce, validBefore: fee.validBefore };
    else {
      auth = { nonce: randomNonce(), validBefore: latest.timestamp + FEE_AUTH_TTL_SECS };
      const replacing = { ...auth, previousNonce: fee.nonce };
      const took = await ctx.db.sql.transaction((tx) =>
        setFeeAuthorizationIn(tx, fee.reservationId, replacing, ctx.now()),
      );
      if (!took) continue; // another process took it meanwhile
    }
    const authorization = {
      from: fee.buyer,
      to: fee.recipient,
      value: fee.amount,
      validAfter: 0n,
      validBefore: auth.validBefore,
      nonce: auth.nonce,
    };
    const signature = signAuthorization(await custodialKeyOf(ctx, fee.buyer), authorization, token, chain.chainId);
    try {
      const use = await chain.submitTransfers(
        operator,
        [{ token: fee.asset, ...authorization, signature }],
        ctx.config.CHAIN_CONFIRM_TIMEOUT_MS,
      );
      await recordCollected(ctx, fee, use);
      result.collected += 1;
    } catch (err) {
      if (!(err instanceof TransferRefused)) throw err;
      // Refused by the token: used meanwhile (another run's send was mined) is collected; anything else (the buyer's
      // funds left the wallet outside payroute) means the fee cannot be taken: released, its cap share given back.
      if (await chain.authorizationUsed(fee.asset, fee.buyer, auth.nonce, (await chain.latestBlock()).number)) continue;
      await releaseFee(ctx, fee, err.reason);
      result.refused += 1;
    }
  }
  return result;
}

async function recordCollected(ctx: ServiceContext, fee: DueFee, use: { txHash: Hex; blockNumber: bigint }) {
  await ctx.db.sql.transaction(
    async (tx) => {
      if (!(await markSpentIn(tx, fee.reservationId, { block: use.blockNumber, txHash: use.txHash }, ctx.now())))
        return;
      await recordFeeTransactionIn(tx, fee.paymentId, use.txHash.toLowerCase(), ctx.now());
    },
    { serializeOn: fee.buyer },
  );
}

async function releaseFee(ctx: ServiceContext, fee: DueFee, reason: string) {
  ctx.log.warn({ paymentId: fee.paymentId, reason }, 'fee leg could not be collected on chain: released');
  await ctx.db.sql.transaction(
    async (tx) => {
      if (!(await releaseReservationIn(tx, fee.reservationId, ctx.now()))) return;
      await releaseFeeStatusIn(tx, fee.paymentId, ctx.now());
      await giveBackCapIn(
        tx,
        { ...fee, cents: fee.feeCents, description: `fee leg not collected on chain: ${reason}`.slice(0, 200) },
        ctx.now(),
      );
    },
    { serializeOn: fee.buyer },
  );
}
