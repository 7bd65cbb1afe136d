// The spend module: what a delegation may pay with, and the one way to charge and give back capped accounts.
export { type CappedAccount, type DelegationAccount, type RefusalReason, delegationAccount } from './accounts.js';
export { currencyPays, fiatCurrencyOf, fundedSymbol } from './currency.js';
export { SpendRefused, accountParams, describeRefusal, spendRefusalError } from './refusal.js';
export { type Charge, type Reservation, type Spend, releaseIn, reserveIn } from './reserve.js';
