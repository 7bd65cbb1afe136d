// The routing fee and the cap charge. x402 pays a fee leg of floor(merchant x bps / 10,000) on top
// of the merchant price; MPP pays the merchant leg only. Cents round up (the cap is never undercharged), the fee
// rounds down (the buyer is never overcharged). A fee that floors to 0 is dropped.
import { atomicToCentsCeil, feeFloor, toWire } from '../money.js';

export interface Fees {
  readonly merchantAmount: bigint;
  readonly bps: number;
  readonly feeAmount: bigint;
  /** ceil(cents(merchant)). */
  readonly approxCents: bigint;
  /** ceil(cents(merchant + fee)): the total drawn from the cap by this payment. */
  readonly capChargedCents: bigint;
  /** capChargedCents - approxCents. */
  readonly feeCents: bigint;
  /** merchant + fee in millionths of the currency unit (6-decimal tokens: atomic units). */
  readonly capChargedMicros: bigint;
}

export function computeFees(merchantAmount: bigint, bps: number, chargeFee: boolean): Fees {
  const effectiveBps = chargeFee ? bps : 0;
  const feeAmount = feeFloor(merchantAmount, BigInt(effectiveBps));
  const approxCents = atomicToCentsCeil(merchantAmount);
  const capChargedCents = atomicToCentsCeil(merchantAmount + feeAmount);
  return {
    merchantAmount,
    bps: feeAmount === 0n ? 0 : effectiveBps,
    feeAmount,
    approxCents,
    capChargedCents,
    feeCents: capChargedCents - approxCents,
    capChargedMicros: merchantAmount + feeAmount,
  };
}

/** The `fee` object of the router payment record; always present, zeroed when there is no fee. */
export function feeRecord(f: Fees, withMicros: boolean) {
  return {
    bps: f.bps,
    amount: toWire(f.feeAmount),
    cents: toWire(f.feeCents),
    capChargedCents: toWire(f.capChargedCents),
    ...(withMicros ? { capChargedMicros: toWire(f.capChargedMicros) } : {}),
  };
}
