// The one money module. Amounts are bigint in code, 64-bit integer columns in the database and
// decimal strings on the wire. Inputs accept a JSON integer that is a safe integer, or a decimal string.
// No float ever touches an amount.
import { z } from 'zod';

/** Largest value a BIGINT column holds on both SQLite and PostgreSQL. */
export const MAX_INT64 = 9_223_372_036_854_775_807n;

/** Atomic units of a 6-decimal stablecoin per cent: 1 cent = 0.01 USD = 10,000 micro-USD. */
export const ATOMIC_PER_CENT = 10_000n;

const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;

function toBigint(v: number | string, ctx: z.RefinementCtx): bigint {
  const b = BigInt(v);
  if (b > MAX_INT64) {
    ctx.addIssue({ code: 'custom', message: 'amount does not fit in a 64-bit integer' });
    return z.NEVER;
  }
  return b;
}

/** A non-negative amount: JSON safe integer or decimal string -> bigint. */
export const Amount = z
  .union([
    z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    z.string().regex(DECIMAL, 'must be a non-negative decimal integer string'),
  ])
  .transform(toBigint);

/** A strictly positive amount. */
export const PositiveAmount = Amount.refine((v) => v > 0n, 'must be greater than 0');

/** One trillion cents (ten billion units): a cap or budget above this is a typo, not a limit. */
export const MAX_LIMIT_CENTS = 1_000_000_000_000n;

/** A spending cap in cents: a delegation's limit, a group budget's. */
export const LimitCents = PositiveAmount.refine((v) => v <= MAX_LIMIT_CENTS, `must be at most ${MAX_LIMIT_CENTS}`);

/** Decimal string for the wire. */
export const toWire = (v: bigint): string => v.toString(10);

/** Reads a value a driver returned for a BIGINT column (bigint, number within the safe range, or string). */
export function fromColumn(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return BigInt(v);
  throw new TypeError('not an integer column value');
}

export const sum = (values: readonly bigint[]): bigint => values.reduce((a, b) => a + b, 0n);

/** ceil(atomic / 10,000): the cents a 6-decimal amount costs, rounded up (never undercharge a cap). */
export function atomicToCentsCeil(atomic: bigint): bigint {
  return (atomic + ATOMIC_PER_CENT - 1n) / ATOMIC_PER_CENT;
}

/** floor(amount * bps / 10,000): the routing fee, rounded down (never overcharge the buyer). */
export function feeFloor(amount: bigint, bps: bigint): bigint {
  return (amount * bps) / 10_000n;
}

export const centsToAtomic = (cents: bigint): bigint => cents * ATOMIC_PER_CENT;
