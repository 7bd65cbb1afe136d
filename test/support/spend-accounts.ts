// Capped accounts of the spend module written straight to the database (the spend tests call the module itself,
// not the endpoints that would create them), and the refusal a spend must end in.
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { Delegation, type DelegationStoredStatus } from '../../shared/db/entities/index.js';
import { type DelegationAccount, SpendRefused, delegationAccount } from '../../shared/spend/index.js';
import type { Stack } from './stack.js';

/** An erc4337 delegation of `userId` in usd, Active and unspent unless told otherwise, as a capped account. */
export async function insertDelegationAccount(
  stack: Stack,
  userId: string,
  o: {
    limit: bigint;
    expiresAt: Date;
    spent?: bigint | undefined;
    status?: DelegationStoredStatus | undefined;
    id?: string | undefined;
  },
): Promise<DelegationAccount> {
  const em = stack.ctx.db.em();
  const id = o.id ?? randomUUID();
  em.create(Delegation, {
    id,
    userId,
    provider: 'erc4337',
    status: o.status ?? 'Active',
    currency: 'usd',
    spendingLimitCents: o.limit,
    amountSpentCents: o.spent ?? 0n,
    transactionCount: 0,
    allowedRecipients: null,
    planId: null,
    apiKeyId: null,
    providerPaymentMethodId: null,
    expiresAt: o.expiresAt,
    revokedAt: null,
    createdAt: new Date(),
  });
  await em.flush();
  return delegationAccount(id, userId);
}

/** The SpendRefused that `work` must throw (asserted), or undefined when it threw anything else. */
export async function refusalOf(t: ExecutionContext, work: Promise<unknown>): Promise<SpendRefused | undefined> {
  const err = await t.throwsAsync(work);
  t.true(err instanceof SpendRefused, String(err));
  return err instanceof SpendRefused ? err : undefined;
}
