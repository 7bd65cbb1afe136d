// The rpc backend's fee legs. A fee leg decided paid (`fee_status = 'settled'`) is still only reserved against the
// buyer's on-chain funds: the operator collects it with an EIP-3009 transfer from the buyer's custodial wallet to the
// fee recipient, paying the gas (admin process, with the reconciler). Only once the merchant leg was seen used on
// chain: a fee on a payment that never happened is never taken (it expires with it, chain-reconciler.ts).
//
// Exactly once, across crashes and processes: the transfer's nonce and validBefore are written on the reservation
// BEFORE it is sent, so a later run that finds them asks the token whether that authorization was used, instead of
// signing a second one. The same key signs the same message to the same signature (RFC 6979), so sending it again
// is harmless: the token refuses a used nonce. An authorization unused past its validBefore is replaced.
import { type Address, type Hex, getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { operatorKeyOf } from '../accounts/service-wallets.js';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import { int64 } from '../db/sql.js';
import { randomNonce, signAuthorization } from '../protocols/eip3009.js';
import type { ChainClient } from '../settlement/chain/client.js';
import { TransferRefused } from '../settlement/chain/client.js';
import { custodialKeyOf } from '../settlement/chain/custodial-key.js';
import { markSpentIn, releaseReservationIn } from '../settlement/chain/reservations.js';
import { giveBackCapIn } from './cap-give-back.js';

/** How long a fee transfer's authorization is valid: the operator sends it at once, this only bounds a stuck one. */
const FEE_AUTH_TTL_SECS = 600n;

interface DueFee {
  reservationId: string;
  paymentId: string;
  userId: string;
  delegationId: string;
  buyer: Address;
  asset: Address;
  recipient: Address;
  amount: bigint;
  feeCents: bigint;
  nonce: Hex | null;
  validBefore: bigint | null;
  fromBlock: bigint;
}

export interface CollectResult {
  collected: number;
  refused: number;
}

/** Collects up to `max` due fee legs, one after another (one operator account: its transactions are sequential). */
export async function collectFeesOnce(ctx: ServiceContext, chain: ChainClient, max = 50): Promise<CollectResult> {
  const rows = await ctx.db.sql.transaction((tx) =>
    tx.all(
      `select f.id, f.reference, f.address, f.asset, f.amount, f.auth_nonce, f.valid_before, f.from_block,
              p.user_id, p.delegation_id, p.fee_recipient, p.fee_cents
       from chain_reservation f
       join router_payment p on p.id = f.reference
       join chain_reservation m on m.id = f.reference
       where f.status = 'open' and f.kind = 'router_fee' and p.fee_status = 'settled' and p.fee_tx_hash is null
         and m.status in ('spent', 'reflected')
       order by f.created_at limit ${max}`,
    ),
  );
  const result: CollectResult = { collected: 0, refused: 0 };
  if (rows.length === 0) return result;
  const operator = privateKeyToAccount(await operatorKeyOf(ctx));
  const asset = (address: Address) => NETWORKS[ctx.config.ENVIRONMENT].assets.find((a) => a.address === address);
  for (const r of rows) {
    const fee: DueFee = {
      reservationId: String(r.id),
      paymentId: String(r.reference),
      userId: String(r.user_id),
      delegationId: String(r.delegation_id),
      buyer: getAddress(String(r.address)),
      asset: getAddress(String(r.asset)),
      recipient: getAddress(String(r.fee_recipient)),
      amount: int64(r.amount),
      feeCents: int64(r.fee_cents),
      nonce: r.auth_nonce === null ? null : (String(r.auth_nonce) as Hex),
      validBefore: r.valid_before === null ? null : int64(r.valid_before),
      fromBlock: int64(r.from_block),
    };
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
      if (latest.timestamp >= fee.validBefore) fee.nonce = null;
    }
    if (fee.nonce === null || fee.validBefore === null) {
      const nonce = randomNonce();
      const validBefore = latest.timestamp + FEE_AUTH_TTL_SECS;
      const n = await ctx.db.sql.transaction((tx) =>
        tx.run(
          "update chain_reservation set auth_nonce = ?, valid_before = ?, updated_at = ? where id = ? and status = 'open' and (auth_nonce is null or auth_nonce = ?)",
          [nonce, validBefore, ctx.now(), fee.reservationId, fee.nonce ?? ''],
        ),
      );
      if (n !== 1) continue; // another process took it meanwhile
      fee.nonce = nonce;
      fee.validBefore = validBefore;
    }
    const authorization = {
      from: fee.buyer,
      to: fee.recipient,
      value: fee.amount,
      validAfter: 0n,
      validBefore: fee.validBefore,
      nonce: fee.nonce,
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
      if (await chain.authorizationUsed(fee.asset, fee.buyer, fee.nonce, (await chain.latestBlock()).number)) continue;
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
      await tx.run('update router_payment set fee_tx_hash = ?, updated_at = ? where id = ?', [
        use.txHash.toLowerCase(),
        ctx.now(),
        fee.paymentId,
      ]);
    },
    { serializeOn: fee.buyer },
  );
}

async function releaseFee(ctx: ServiceContext, fee: DueFee, reason: string) {
  ctx.log.warn({ paymentId: fee.paymentId, reason }, 'fee leg could not be collected on chain: released');
  await ctx.db.sql.transaction(
    async (tx) => {
      if (!(await releaseReservationIn(tx, fee.reservationId, ctx.now()))) return;
      await tx.run("update router_payment set fee_status = 'released', updated_at = ? where id = ?", [
        ctx.now(),
        fee.paymentId,
      ]);
      await giveBackCapIn(
        tx,
        { ...fee, cents: fee.feeCents, description: `fee leg not collected on chain: ${reason}`.slice(0, 200) },
        ctx.now(),
      );
    },
    { serializeOn: fee.buyer },
  );
}
