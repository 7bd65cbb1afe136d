// The one card-processor port for fiat-backed delegations (stripe, braintree, visa; DESIGN §6). No card network
// can be reached from here, so only the sandbox implementation exists: a charge is a ledger movement in cents,
// in asset `fiat:<currency>`, from the delegation's card pseudo-account to each payee. The cap itself is not the
// processor's business: callers reserve against the delegation first and release if the charge is declined.
import type { ServiceContext } from '../context.js';
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
  /** Idempotency / audit reference of the charge (e.g. the order id). */
  readonly reference: string;
}

export type ChargeResult = { type: 'charged'; chargeId: string } | { type: 'declined'; reason: string };

export interface CardProcessor {
  charge(charge: CardCharge): Promise<ChargeResult>;
}

export const cardAccountOf = (delegationId: string): string => `${CARD_ACCOUNT_PREFIX}${delegationId}`;
export const fiatAssetOf = (currency: string): string => `fiat:${currency}`;

/** Sandbox: every charge succeeds; one ledger transaction, one movement per payee with a positive part. */
export function sandboxCardProcessor(ctx: ServiceContext): CardProcessor {
  return {
    async charge(c) {
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
      const chargeId = await ctx.db.sql.transaction((tx) => applyMovements(tx, movements, ctx.now()));
      return { type: 'charged', chargeId };
    },
  };
}
