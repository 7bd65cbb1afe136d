// The one card-processor port for fiat-backed delegations (stripe, braintree, visa). No card network can be
// reached from here, so only the sandbox implementation exists: a charge is a ledger movement in cents, in asset
// `fiat:<currency>`, from the delegation's card pseudo-account to each payee. The cap itself is not the
// processor's business: callers charge it through the spend module first and give it back if the charge is
// declined.
//
// How a charge composes with the caller's transaction: it is made INSIDE it, after the cap was reserved and while
// the caller holds its claim (an x402 settle's unique row), so identical requests in any process wait for this
// charge's outcome instead of charging the card again. The sandbox's movement runs on that same transaction and
// commits with the order and the credits, or rolls back with them: there is never a charge without its order.
// A real card network cannot join a database transaction. Its adapter would place an authorization (a hold) here,
// keyed by `idempotencyKey` so that a repeat after a rolled-back attempt meets the same hold instead of placing a
// second one, and capture it once the caller committed (the hold lapses if it never does); the port would then
// gain that capture step.
import type { SqlTx } from '../db/sql.js';
import { sum } from '../money.js';
import { CARD_ACCOUNT_PREFIX, type Movement, applyMovements } from './token-ledger.js';

export interface CardCharge {
  readonly delegationId: string;
  readonly provider: string;
  /** Lowercase ISO 4217 code (`usd`, `eur`). */
  readonly currency: string;
  /** Total charged; must equal the sum of the payees' parts. */
  readonly cents: bigint;
  readonly payees: readonly { readonly address: string; readonly cents: bigint }[];
  /** Audit reference of the charge (the order id): kept on the ledger rows. */
  readonly reference: string;
  /** The same for every repeat of one purchase (an x402 settle: its permission and agentRequestId). */
  readonly idempotencyKey: string;
}

export type ChargeResult = { type: 'charged'; chargeId: string } | { type: 'declined'; reason: string };

export interface CardProcessor {
  /** Charges the card inside the caller's transaction `tx` (see above); a decline writes nothing. */
  charge(tx: SqlTx, charge: CardCharge, now: Date): Promise<ChargeResult>;
}

export const cardAccountOf = (delegationId: string): string => `${CARD_ACCOUNT_PREFIX}${delegationId}`;
export const fiatAssetOf = (currency: string): string => `fiat:${currency}`;

/** Sandbox: every well-formed charge succeeds; one movement per payee with a positive part, on the caller's `tx`. */
export function sandboxCardProcessor(): CardProcessor {
  return {
    async charge(tx, c, now) {
      if (c.cents <= 0n) return { type: 'declined', reason: 'charge amount must be positive' };
      if (c.payees.some((p) => p.cents < 0n || p.address === '') || sum(c.payees.map((p) => p.cents)) !== c.cents) {
        return { type: 'declined', reason: 'payee parts do not add up to the charge' };
      }
      const movements: Movement[] = c.payees.map((p) => ({
        from: cardAccountOf(c.delegationId),
        to: p.address,
        asset: fiatAssetOf(c.currency),
        amount: p.cents,
        kind: `card_charge:${c.provider}`,
        reference: c.reference,
      }));
      return { type: 'charged', chargeId: await applyMovements(tx, movements, now) };
    },
  };
}
