// What a delegation's currency may pay with: the one rule, used by the router (choosing and issuance), x402
// verify and funding predictions, and the x402 auto-order. A usd/usdc delegation pays USDC, eur/eurc pays EURC,
// and nothing else is fundable: the cap is kept in cents of one currency, and charging it for a token of another
// would need an exchange rate the service does not have. A card-backed delegation is charged in the fiat
// currency of the same unit (a usdc cap is charged to the card in usd).
import type { Asset } from '../assets.js';

/** The currencies a capped account (a delegation) may be kept in. */
export const CURRENCIES = ['usd', 'eur', 'usdc', 'eurc'] as const;
export type Currency = (typeof CURRENCIES)[number];

interface Funding {
  /** The stablecoin the cap pays with. */
  readonly symbol: Asset['symbol'];
  /** The lowercase ISO 4217 code a card-backed delegation is charged in. */
  readonly fiat: 'usd' | 'eur';
}

// Typed by Currency so a currency added to the list cannot be left without a rule.
const FUNDING: Readonly<Record<Currency, Funding>> = {
  usd: { symbol: 'USDC', fiat: 'usd' },
  usdc: { symbol: 'USDC', fiat: 'usd' },
  eur: { symbol: 'EURC', fiat: 'eur' },
  eurc: { symbol: 'EURC', fiat: 'eur' },
};
// Looked up through a Map: a stored value such as "constructor" must not reach Object.prototype.
const BY_CURRENCY = new Map<string, Funding>(Object.entries(FUNDING));

/** The rule for a stored currency; undefined for anything else (a row written by a future version, say). */
const fundingOf = (currency: string): Funding | undefined => BY_CURRENCY.get(currency);

/** The stablecoin a delegation currency pays; undefined when it pays none. */
export function fundedSymbol(currency: string): Asset['symbol'] | undefined {
  return fundingOf(currency)?.symbol;
}

/** Whether a delegation in `currency` may pay a token with `symbol`. */
export function currencyPays(currency: string, symbol: string): boolean {
  const funded = fundedSymbol(currency);
  return funded !== undefined && funded === symbol;
}

/** The fiat currency a card-backed delegation in `currency` is charged in; undefined when none. */
export function fiatCurrencyOf(currency: string): Funding['fiat'] | undefined {
  return fundingOf(currency)?.fiat;
}
