// Payees an offer may name that are never paid, whatever else the offer gets right.
// - The zero address: nobody holds its key, so tokens sent there are gone (USDC and EURC refuse a transfer to it,
//   so a signed authorization never settles, yet the cap and the ledger would record it as paid).
// - The paying wallet itself: the merchant is paid nothing, while the buyer's cap is charged, the routing fee is
//   taken and the authorization's nonce is spent; a merchant naming the buyer as payee is misconfigured or is
//   probing for exactly that.
import { ChoiceReason } from './reasons.js';

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** Why `payee` may not be paid by `payer`, or undefined when it may. Addresses compare case-insensitively. */
export function payeeRefusal(
  payee: string,
  payer: string | undefined,
  /** Set when an organization wallet pays: the spending member's own wallet, which it never pays. */
  spender?: string | undefined,
): { readonly reason: ChoiceReason; readonly detail: string } | undefined {
  const p = payee.toLowerCase();
  if (p === ZERO_ADDRESS)
    return { reason: ChoiceReason.payeeZeroAddress, detail: `payee ${payee} is the zero address` };
  if (payer !== undefined && p === payer.toLowerCase())
    return { reason: ChoiceReason.payeeIsPayer, detail: `payee ${payee} is the paying wallet` };
  if (spender !== undefined && p === spender.toLowerCase())
    return { reason: ChoiceReason.payeeIsSpender, detail: `payee ${payee} is the spending member's own wallet` };
  return undefined;
}
