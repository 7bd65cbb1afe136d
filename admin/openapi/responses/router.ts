// What the payment router answers (the proxy process): the payment record of shared/router/responses.ts,
// mode A's credential, mode B's relayed answer, the ledger and its summary.
import { z } from 'zod';
import { PAYMENT_STATUSES } from '../../../shared/db/entities/index.js';
import type { PaymentRecord as PaymentRecordType } from '../../../shared/router/responses.js';
import type { paymentsSummary } from '../../../shared/router/payments-summary.js';
import { Address, Decimal, type Fits, Id, Network, Timestamp, named, pageOf } from './common.js';

const Settlement = z.object({
  recipient: Address,
  /** Atomic units of the asset paid to the merchant. */
  amount: Decimal,
  network: Network,
  /** The merchant leg in cents, rounded up. */
  approxCents: Decimal,
  asset: Address,
  scheme: z.string(),
});

const feeFields = {
  bps: z.number().int().nonnegative(),
  /** Atomic units paid to the operator on top of the merchant price. */
  amount: Decimal,
  cents: Decimal,
  /** What the payment drew from the delegation's cap, in cents. */
  capChargedCents: Decimal,
};
const Fee = z.object({
  ...feeFields,
  /** Merchant price and fee in millionths of the currency unit. */
  capChargedMicros: Decimal,
});

const Status = z.enum(PAYMENT_STATUSES);
const X402Version = z.union([z.literal(1), z.literal(2)]);

export const PaymentRecord = named(
  'PaymentRecord',
  z.object({
    paymentId: Id,
    protocol: z.enum(['x402', 'mpp']),
    settlement: Settlement,
    fee: Fee,
    delegationId: Id,
    /** Who paid: null for the user's API key, else the connector's client and grant. */
    clientId: z.string().nullable(),
    grantId: z.string().nullable(),
    status: Status,
    x402Version: X402Version.optional(),
    resourceUrl: z.string().nullable(),
    requestId: z.string().nullable(),
    txHash: z.string().nullable(),
    createdAt: Timestamp,
  }),
  'A router payment as the ledger keeps it (never its credential, which is shown once).',
);

export const MintedCredential = named(
  'MintedCredential',
  z.object({
    paymentId: Id,
    protocol: z.enum(['x402', 'mpp']),
    /** Attach it to the re-sent request: `PAYMENT-SIGNATURE` (x402 v2), `X-PAYMENT` (v1) or `Authorization` (MPP). */
    credential: z.object({ transport: z.literal('header'), name: z.string(), value: z.string() }),
    settlement: Settlement,
    fee: Fee,
    delegationId: Id,
    status: z.literal('Issued'),
    x402Version: X402Version.optional(),
    resourceUrl: z.string().nullable(),
    requestId: z.string().nullable(),
    txHash: z.null(),
  }),
  'Mode A: the payment credential for the 402 the caller received.',
);

export const RouteResult = named(
  'RouteResult',
  z.union([
    z.object({
      /** The merchant's status and body (JSON when it was JSON, else its text; null when empty). */
      status: z.number().int(),
      body: z.unknown(),
      paid: z.literal(false),
    }),
    z.object({
      status: z.number().int(),
      body: z.unknown(),
      paid: z.literal(true),
      payment: z.object({
        paymentId: Id,
        settlement: Settlement,
        fee: z.object(feeFields),
        status: Status,
        txHash: z.string().nullable(),
      }),
    }),
  ]),
  "Mode B: the merchant's answer, and the payment when its 402 was paid (a free answer leaves no record).",
);

export const PaymentPage = named(
  'PaymentPage',
  pageOf('payments', PaymentRecord),
  'A page of the ledger, newest first (`offset` is the page size, as `limit`).',
);

export const PaymentSummary = named(
  'PaymentSummary',
  z.object({
    total: z.number().int().nonnegative(),
    series: z.array(z.object({ date: z.iso.date(), value: z.number().int().positive() })),
  }),
  "The number of payments per UTC day, ISO week or month (`date` is the bucket's first day).",
);

// The ledger's records are built with feeRecord(fees, true): capChargedMicros is always there.
export type PaymentRecordFits = Fits<typeof PaymentRecord, PaymentRecordType & { fee: { capChargedMicros: string } }>;
export type PaymentSummaryFits = Fits<typeof PaymentSummary, Awaited<ReturnType<typeof paymentsSummary>>>;
