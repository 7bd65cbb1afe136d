// Step "sign": the payer's authorization for the priced leg. It needs nothing from the database, so it is made
// before the reservation and dropped unsent if the reservation is refused (reserve.ts).
import { bytesToHex } from 'viem';
import { type TransferAuthorization, keyBytes } from '../../protocols/eip3009.js';
import { type PaymentChoice, type SignedPayment, preparePayment } from '../../protocols/payment.js';
import { ChainUnavailable } from '../../settlement/chain/client.js';
import { chainUnavailableError } from '../../settlement/chain/errors.js';
import type { RouterServices } from '../services.js';
import type { Payer } from '../payer.js';

export interface Signed {
  readonly authorization: TransferAuthorization;
  readonly signed: SignedPayment;
}

/** `asset`: the priced leg's token address, whose balance the settlement backend may read first. */
export async function signLeg(
  services: RouterServices,
  payer: Payer,
  choice: PaymentChoice,
  asset: string,
): Promise<Signed> {
  const { ctx } = services;
  const buyer = payer.address;
  // x402: validBefore at most ROUTER_MAX_AUTH_TTL_SECS away (a leaked credential stays spendable no longer).
  const unsigned = preparePayment(choice, buyer, { maxAuthTtlSeconds: ctx.config.ROUTER_MAX_AUTH_TTL_SECS });
  // Before signing and outside the transaction: with the rpc backend this may read the buyer's balance on chain.
  await services.settlement.prepare(buyer, asset).catch((err: unknown) => {
    throw err instanceof ChainUnavailable ? chainUnavailableError(err) : err;
  });
  const key = keyBytes(await payer.key());
  const signed = unsigned.finish(bytesToHex(await services.signer.sign(unsigned.typed, key)));
  return { authorization: unsigned.authorization, signed };
}
