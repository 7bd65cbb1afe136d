// Router payments (the proxy): how each ended, by protocol, and the money they moved per asset.
import { Counter } from 'prom-client';
import { asAppError } from '../errors/app-error.js';
import {
  ERROR_CODES,
  PAYMENT_OUTCOMES,
  PAYMENT_PROTOCOLS,
  type PaymentOutcome,
  type PaymentProtocol,
  assetLabel,
  bounded,
} from './labels.js';
import { PREFIX, collectors } from './collectors.js';

const payments = new Counter({
  name: `${PREFIX}router_payments_total`,
  help:
    'Router payments by protocol (x402_v1, x402_v2, mpp; none when refused before one was chosen), outcome ' +
    '(issued, settled, rejected, unanswered, refused) and, for a refusal, its error code (else none).',
  labelNames: ['protocol', 'outcome', 'code'] as const,
  registers: [collectors],
});

/**
 * Sums in atomic units of the asset, kept as bigint. prom-client's counters take JavaScript numbers, and adding
 * each payment as a number would round once the running total passes 2^53 (about 9 billion USDC), each addition
 * rounding again; here every addition is exact and the sum is converted once, when scraped (collect below).
 * The text format carries a float64 anyway (Prometheus stores nothing else), so a total past 2^53 is shown to 16
 * significant digits: the exact figures are the database's (router_payment).
 */
const paid = new Map<string, bigint>();
const fees = new Map<string, bigint>();

function exposeSums(counter: Counter<'asset'>, sums: ReadonlyMap<string, bigint>): void {
  counter.reset();
  for (const [asset, sum] of sums) counter.inc({ asset }, Number(sum));
}

new Counter({
  name: `${PREFIX}router_paid_atomic_total`,
  help: "Merchant legs of router payments signed and recorded, in the asset's atomic units (USDC, EURC: 6 decimals).",
  labelNames: ['asset'] as const,
  registers: [collectors],
  collect() {
    exposeSums(this, paid);
  },
});

new Counter({
  name: `${PREFIX}router_fees_atomic_total`,
  help: "Router fee legs settled (paid to the fee recipient), in the asset's atomic units.",
  labelNames: ['asset'] as const,
  registers: [collectors],
  collect() {
    exposeSums(this, fees);
  },
});

function add(sums: Map<string, bigint>, asset: string, amount: bigint): void {
  if (amount <= 0n) return;
  const label = assetLabel(asset);
  sums.set(label, (sums.get(label) ?? 0n) + amount);
}

/** A payment's protocol label, from its row (`protocol`, `x402Version`) or its choice (`type`, `version`). */
export function protocolLabel(p: { protocol: string; x402Version: number | null | undefined }): PaymentProtocol {
  if (p.protocol === 'mpp') return 'mpp';
  if (p.protocol !== 'x402') return 'none';
  return p.x402Version === 1 ? 'x402_v1' : 'x402_v2';
}

/** A choice (shared/protocols/payment.ts) as protocolLabel reads it; undefined before anything was chosen. */
export function choiceProtocol(choice: { type: string; version?: number } | undefined): PaymentProtocol {
  return choice === undefined ? 'none' : protocolLabel({ protocol: choice.type, x402Version: choice.version });
}

/** A router payment that ended (never counted twice: each flow counts at its last step). */
export function countPayment(protocol: PaymentProtocol, outcome: PaymentOutcome): void {
  payments.inc({
    protocol: bounded(PAYMENT_PROTOCOLS, protocol),
    outcome: bounded(PAYMENT_OUTCOMES, outcome),
    code: 'none',
  });
}

/** A payment refused before anything was paid: its error's catalogue code (anything else is a 500's). */
export function countRefusedPayment(protocol: PaymentProtocol, err: unknown): void {
  payments.inc({
    protocol: bounded(PAYMENT_PROTOCOLS, protocol),
    outcome: 'refused',
    code: bounded(ERROR_CODES, asAppError(err).code),
  });
}

/** The merchant leg of a payment once its issuance committed, and its fee leg when that settled with it. */
export function countPaid(asset: string, amount: bigint, fee: bigint): void {
  add(paid, asset, amount);
  add(fees, asset, fee);
}

/** A fee leg settled after the paid call (mode B), once its transaction committed. */
export function countFeePaid(asset: string, fee: bigint): void {
  add(fees, asset, fee);
}
