// Why an offered payment option cannot be funded: machine-readable reasons in one place (coinbase/x402
// mechanisms/evm/.../errors.ts habit), each with the catalogue code the router answers with (router flow step 5 in docs/architecture.md:
// nothing fundable -> 400 BCK.ROUTER.0001 naming why; an EIP-712 domain other than ours -> 400 BCK.ROUTER.0012).
import type { ErrorCode } from '../errors/catalogue.js';

export const ChoiceReason = {
  /** The merchant offered nothing at all. */
  noOptions: 'no_payment_options',
  /** An option is missing a field the scheme needs or carries one of the wrong shape. */
  malformedOption: 'malformed_option',
  /** x402: a scheme other than `exact`. */
  unsupportedScheme: 'unsupported_scheme',
  /** A network (or chain id) this environment does not fund, or one ROUTER_FUNDED_NETWORKS leaves out. */
  networkNotFunded: 'network_not_funded',
  /** x402: an asset that is not in the asset table of the network. */
  unknownAsset: 'unknown_asset',
  /** x402: `extra.name` / `extra.version` absent or different from the token's EIP-712 domain in our table. */
  eip712DomainMismatch: 'eip712_domain_mismatch',
  /** Zero, or larger than a 64-bit amount column holds. */
  amountOutOfRange: 'amount_out_of_range',
  /** The pay-to address is not in the delegation's allowedRecipients. */
  recipientNotAllowed: 'recipient_not_allowed',
  /** The pay-to address is the zero address (payee.ts). */
  payeeZeroAddress: 'payee_zero_address',
  /** The pay-to address is the paying wallet itself (payee.ts). */
  payeeIsPayer: 'payee_is_payer',
  /** An organization wallet pays: the pay-to address is the wallet of the member spending it (router/steps/price.ts). */
  payeeIsSpender: 'payee_is_spender',
  /** MPP: a method other than `evm` (e.g. `tempo`, `stripe`): EIP-3009 cannot pay it. */
  unsupportedMethod: 'unsupported_method',
  /** MPP: an intent other than `charge` (e.g. `session`). */
  unsupportedIntent: 'unsupported_intent',
  /** MPP: the request does not accept the `authorization` credential type. */
  unsupportedCredentialType: 'unsupported_credential_type',
  /**
   * MPP: the challenge's `header` parameter names a field the credential may not go in (not a token, or one the
   * router never lets a merchant set: host, content-length, hop-by-hop, cookie, x-router-*, ...).
   */
  unsupportedCredentialHeader: 'unsupported_credential_header',
  /** MPP: payment splits; one EIP-3009 authorization pays one recipient. */
  splitsNotSupported: 'splits_not_supported',
  /** MPP: a currency outside ROUTER_MPP_ASSETS (default: the built-in USDC/EURC table). */
  currencyNotAllowed: 'currency_not_allowed',
  /** MPP: the challenge's `expires` has passed (the authorization could never be valid). */
  challengeExpired: 'challenge_expired',
} as const;

export type ChoiceReason = (typeof ChoiceReason)[keyof typeof ChoiceReason];

/**
 * How far an option got before it was refused. When every option is refused the router names the reason of the
 * option that got furthest: "your USDC option names the wrong EIP-712 domain" says more than "option 2 was on
 * another chain".
 */
const PROGRESS: Record<ChoiceReason, number> = {
  no_payment_options: 0,
  malformed_option: 1,
  unsupported_scheme: 2,
  unsupported_method: 2,
  unsupported_intent: 3,
  network_not_funded: 4,
  unknown_asset: 5,
  currency_not_allowed: 5,
  eip712_domain_mismatch: 6,
  unsupported_credential_type: 6,
  unsupported_credential_header: 6,
  splits_not_supported: 7,
  challenge_expired: 8,
  amount_out_of_range: 9,
  recipient_not_allowed: 10,
  payee_zero_address: 10,
  payee_is_payer: 10,
  payee_is_spender: 10,
};

export const codeOf = (reason: ChoiceReason): ErrorCode =>
  reason === ChoiceReason.eip712DomainMismatch ? 'BCK.ROUTER.0012' : 'BCK.ROUTER.0001';

export interface Rejection {
  /** Position of the option in the merchant's list (x402 `accepts[i]`, or the i-th Payment challenge). */
  readonly index: number;
  readonly reason: ChoiceReason;
  /** A short, safe, human-readable detail (the offending value), for the 400's `details`. */
  readonly detail: string;
}

/** Nothing fundable: the reason of the option that got furthest, its code, and every rejection. */
export interface NoChoice {
  readonly type: 'none';
  readonly reason: ChoiceReason;
  readonly code: ErrorCode;
  readonly message: string;
  readonly rejected: readonly Rejection[];
}

export function noChoice(rejected: readonly Rejection[], what: string): NoChoice {
  const best = rejected.reduce<Rejection | undefined>(
    (acc, r) => (acc === undefined || PROGRESS[r.reason] > PROGRESS[acc.reason] ? r : acc),
    undefined,
  );
  if (best === undefined) {
    return {
      type: 'none',
      reason: ChoiceReason.noOptions,
      code: 'BCK.ROUTER.0001',
      message: `no ${what} offered`,
      rejected,
    };
  }
  return {
    type: 'none',
    reason: best.reason,
    code: codeOf(best.reason),
    message: `no fundable ${what}: option ${best.index}: ${best.reason} (${best.detail})`,
    rejected,
  };
}

/** Keeps a merchant-supplied value short and printable before it goes into an error message. */
export function clip(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    s = typeof value;
  }
  const printable = s.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 80 ? `${printable.slice(0, 77)}...` : printable;
}
