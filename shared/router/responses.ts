// The router payment record on the wire.
import { toWire } from '../money.js';
import { type Fees, feeRecord } from './fees.js';

export interface PaymentRowLike {
  id: string;
  protocol: string;
  x402Version?: number | null | undefined;
  status: string;
  scheme: string;
  network: string;
  asset: string;
  recipient: string;
  amount: bigint;
  approxCents: bigint;
  feeBps: number;
  feeAmount: bigint;
  feeCents: bigint;
  capChargedCents: bigint;
  delegationId: string;
  grantId?: string | null | undefined;
  clientId?: string | null | undefined;
  resourceUrl?: string | null | undefined;
  requestId?: string | null | undefined;
  txHash?: string | null | undefined;
  createdAt: Date;
}

export function feesOf(row: PaymentRowLike): Fees {
  return {
    merchantAmount: row.amount,
    bps: row.feeBps,
    feeAmount: row.feeAmount,
    approxCents: row.approxCents,
    capChargedCents: row.capChargedCents,
    feeCents: row.feeCents,
    capChargedMicros: row.amount + row.feeAmount,
  };
}

export function settlementRecord(row: PaymentRowLike) {
  return {
    recipient: row.recipient,
    amount: toWire(row.amount),
    network: row.network,
    approxCents: toWire(row.approxCents),
    asset: row.asset,
    scheme: row.scheme,
  };
}

/** The stored record (ledger listing and mode A): never carries the credential, which is shown once. */
export function paymentRecord(row: PaymentRowLike) {
  return {
    paymentId: row.id,
    protocol: row.protocol,
    settlement: settlementRecord(row),
    fee: feeRecord(feesOf(row), true),
    delegationId: row.delegationId,
    // Who paid: null for the user's API key, else the connector's client and the grant (binding) it paid through.
    clientId: row.clientId ?? null,
    grantId: row.grantId ?? null,
    status: row.status,
    ...(row.x402Version == null ? {} : { x402Version: row.x402Version }),
    resourceUrl: row.resourceUrl ?? null,
    requestId: row.requestId ?? null,
    txHash: row.txHash ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export type PaymentRecord = ReturnType<typeof paymentRecord>;
