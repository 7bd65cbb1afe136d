// POST /router/payments/{id}/settled: the caller reports the transaction that settled an issued credential.
import type { Hex } from 'viem';
import type { ServiceContext } from '../context.js';
import { emSql } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import { ChainUnavailable, type ChainClient } from '../settlement/chain/client.js';
import { chainUnavailableError } from '../settlement/chain/errors.js';
import { markSpentIn, reservationAddressIn } from '../settlement/chain/reservations.js';
import { findOwnPayment, paymentById, updatePaymentIn } from './payment-store.js';
import { type PaymentRecord, paymentRecord } from './responses.js';

/**
 * POST /router/payments/{id}/settled: records the on-chain transaction of an issued payment credential. With the rpc backend
 * (`chain`) the transaction is checked first: it must be mined (409 BCK.ROUTER.0014), have succeeded (0015) and have
 * used this payment's authorization, i.e. emitted the payment token's AuthorizationUsed for its payer and nonce
 * (0016). With the ledger backend there is no chain to ask, and the caller's word is recorded.
 */
export async function recordSettled(
  ctx: ServiceContext,
  chain: ChainClient | undefined,
  userId: string,
  paymentId: string,
  txHash: string,
): Promise<PaymentRecord> {
  // A transaction hash is hex: compared and stored in lower case, so 0xAB.. and 0xab.. are the same hash.
  const hash = txHash.toLowerCase();
  const row = await findOwnPayment(ctx, userId, paymentId);
  if (row === null) throw new AppError('BCK.ROUTER.0004', { details: `payment ${paymentId} not found` });
  const sameHash = (r: { status: string; txHash?: string | null | undefined }) =>
    r.status === 'Settled' && r.txHash?.toLowerCase() === hash;
  if (sameHash(row)) return paymentRecord(row); // same hash again: no-op
  const spentIn = chain === undefined ? undefined : await checkSettlingTransaction(ctx, chain, row, hash);
  const moved = await ctx.db.sql.transaction(
    async (tx) => {
      // The reservation is spent in the transaction's block (the reconciler would have found the same).
      if (spentIn !== undefined) await markSpentIn(tx, row.id, { block: spentIn, txHash: hash }, ctx.now());
      return updatePaymentIn(tx, row.id, 'Issued', { status: 'Settled', txHash: hash, failureReason: null }, ctx.now());
    },
    { serializeOn: row.id },
  );
  if (!moved) {
    // Lost a race (another /settled, or the paid call's outcome): read what won; the same hash is still a no-op.
    const now = await paymentById(ctx, paymentId);
    if (sameHash(now)) return paymentRecord(now);
    throw new AppError('BCK.ROUTER.0005', {
      details: `payment ${paymentId} is ${now.status}${now.txHash ? ' with another txHash' : ''}`,
    });
  }
  return paymentRecord(await paymentById(ctx, paymentId));
}

/** The block of the transaction `hash` if it settled this payment on chain; else the 409 saying why not. */
async function checkSettlingTransaction(
  ctx: ServiceContext,
  chain: ChainClient,
  row: { id: string; asset: string; authNonce?: string | null | undefined },
  hash: string,
): Promise<bigint> {
  if (!/^0x[0-9a-f]{64}$/.test(hash))
    throw new AppError('BCK.ROUTER.0014', { details: `no transaction has the hash ${hash}` });
  const mined = await chain.minedTransaction(hash as Hex).catch((err: unknown) => {
    throw err instanceof ChainUnavailable ? chainUnavailableError(err) : err;
  });
  if (mined === undefined)
    throw new AppError('BCK.ROUTER.0014', { details: `transaction ${hash} is not mined on chain` });
  if (mined.status !== 'success') throw new AppError('BCK.ROUTER.0015', { details: `transaction ${hash} reverted` });
  // The payer is the reservation's wallet (a payment written under the ledger backend has none: nonce and token decide).
  const payer = await reservationAddressIn(emSql(ctx.db.em(), ctx.db.dialect), row.id);
  const nonce = row.authNonce?.toLowerCase();
  const used = mined.authorizations.some(
    (a) =>
      a.token.toLowerCase() === row.asset.toLowerCase() &&
      a.nonce.toLowerCase() === nonce &&
      (payer === undefined || a.authorizer.toLowerCase() === payer.toLowerCase()),
  );
  if (!used)
    throw new AppError('BCK.ROUTER.0016', {
      details: `transaction ${hash} did not use the authorization of payment ${row.id}`,
    });
  return mined.blockNumber;
}
