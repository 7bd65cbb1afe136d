// The one refusal of a spend: which account refused and why, and the one place it becomes a catalogue error.
import { AppError } from '../errors/app-error.js';
import type { CappedAccount, RefusalCause } from './accounts.js';

const LABEL: Record<CappedAccount['kind'], string> = { delegation: 'delegation' };

/** The refusal's message, safe to show: it names the account's kind and the condition, never another user's data. */
export function describeRefusal(kind: CappedAccount['kind'], cause: RefusalCause): string {
  const label = LABEL[kind];
  switch (cause.reason) {
    case 'not_found':
      return `${label} not found`;
    case 'over_cap':
      return cause.remainingCents === 0n ? `${label} is exhausted` : `${label} budget exceeded`;
    default:
      return `${label} is ${cause.reason}`;
  }
}

/**
 * Thrown by `reserveIn` when an account's conditional UPDATE matched no row. The charges before it in the same
 * spend are already applied: the caller's transaction MUST roll back (let the error leave the transaction).
 */
export class SpendRefused extends Error {
  constructor(
    readonly account: CappedAccount,
    readonly why: RefusalCause,
  ) {
    super(describeRefusal(account.kind, why));
    this.name = 'SpendRefused';
  }
}

/** The params naming the refusing account (`delegationId`), as every spend error carries them. */
export function accountParams(account: CappedAccount): Record<string, string> {
  switch (account.kind) {
    case 'delegation':
      return { delegationId: account.id };
  }
}

/**
 * A refusal as the catalogue error: 402 BCK.ROUTER.0003 naming the account. For the refusal the charge itself
 * threw (SpendRefused) and for one predicted from a snapshot before it (an early refusal of the same condition).
 */
export function refusalError(account: CappedAccount, why: RefusalCause): AppError {
  return new AppError('BCK.ROUTER.0003', describeRefusal(account.kind, why), accountParams(account));
}

export const spendRefusalError = (refused: SpendRefused): AppError => refusalError(refused.account, refused.why);
