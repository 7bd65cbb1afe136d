// The spend module: what a delegation may pay with, and the one way to charge and give back capped accounts
// (delegations and group budgets).
export {
  type CappedAccount,
  type DelegationAccount,
  type GroupBudgetAccount,
  type RefusalCause,
  type RefusalReason,
  delegationAccount,
  groupBudgetAccount,
} from './accounts.js';
export {
  type BudgetPeriod,
  type StoredPeriod,
  calendarPeriod,
  currentPeriod,
  firstPeriod,
} from './group-budget-account.js';
export { type DelegationState, predictDelegationRefusal } from './delegation-account.js';
export { currencyPays, fiatCurrencyOf, fundedSymbol } from './currency.js';
export { SpendRefused, accountParams, describeRefusal, refusalError, spendRefusalError } from './refusal.js';
export { type Charge, type Reservation, type Spend, releaseIn, reserveIn } from './reserve.js';
