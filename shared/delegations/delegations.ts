// Spending delegations: create, read, list, revoke. What a delegation has spent is changed only by the spend module
// (shared/spend), through cap.ts here and the router's and the x402 auto-order's transactions.
import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import type { Em } from '../db/sql.js';
import { AppError } from '../errors/app-error.js';
import type { TokenSigner } from '../keys/signing-keys.js';
import { toWire } from '../money.js';
import { orgFundingFor } from '../organizations/spending.js';
import { activeApiKeyOf } from '../accounts/store.js';
import { planById } from '../registry/store/plans.js';
import { type DelegationRecord, delegationRecord } from './responses.js';
import {
  type NewDelegationRow,
  delegationsPage,
  findOwnDelegation,
  insertDelegation,
  revokeActive,
  transactionsPage,
} from './store.js';
import { type CreateDelegationInput, FIAT_PROVIDERS, type DelegationStatus } from './requests.js';

export const DELEGATION_TOKEN_AUDIENCE = 'payroute:delegation';

export async function createDelegation(
  ctx: ServiceContext,
  signer: TokenSigner,
  owner: { userId: string },
  input: CreateDelegationInput,
): Promise<{ delegationId: string; delegationToken?: string }> {
  const em = ctx.db.em();
  if (input.apiKeyId !== undefined) {
    const key = await activeApiKeyOf(em, owner.userId, input.apiKeyId);
    if (key === null) throw new AppError('BCK.HTTP.0400', { details: 'apiKeyId is not an active API key of yours' });
  }
  if (input.planId !== undefined) {
    const plan = await planById(em, input.planId);
    if (plan === null || (!plan.listed && plan.ownerId !== owner.userId)) {
      throw new AppError('BCK.HTTP.0400', { details: `planId ${input.planId} is not a plan you can buy` });
    }
  }
  const funding =
    input.organizationWalletId === undefined
      ? undefined
      : await orgFundingFor(ctx, owner.userId, input.organizationWalletId, input.groupId);
  const now = ctx.now();
  const row = delegationRow(owner, { ...input, ...funding }, now);
  await insertDelegation(em, row);
  const { id } = row;
  if (!(FIAT_PROVIDERS as readonly string[]).includes(input.provider)) return { delegationId: id };
  // Fiat-backed: a service-signed JWT naming the delegation, cap, currency, expiry (exp) and owner (sub).
  const delegationToken = await signer.sign(
    {
      delegationId: id,
      provider: input.provider,
      spendingLimitCents: toWire(input.spendingLimitCents),
      currency: input.currency,
    },
    { audience: DELEGATION_TOKEN_AUDIENCE, subject: owner.userId, ttlSecs: input.durationSecs },
  );
  return { delegationId: id, delegationToken };
}

type NewDelegationInput = Pick<CreateDelegationInput, 'provider' | 'currency' | 'spendingLimitCents' | 'durationSecs'> &
  Partial<Pick<CreateDelegationInput, 'allowedRecipients' | 'planId' | 'apiKeyId' | 'providerPaymentMethodId'>> & {
    orgWalletId?: string | undefined;
    groupId?: string | undefined;
  };

/**
 * Inserts a new Active delegation on `em`: inside the caller's `em.transactional`, so it commits with what it
 * belongs to (an OAuth grant and its code are created in the same transaction).
 */
export async function newDelegation(
  em: Em,
  owner: { userId: string },
  input: NewDelegationInput,
  now: Date,
): Promise<{ id: string; expiresAt: Date }> {
  const row = delegationRow(owner, input, now);
  await insertDelegation(em, row);
  return { id: row.id, expiresAt: row.expiresAt };
}

/** A new Active delegation's row: nothing spent yet. */
function delegationRow(owner: { userId: string }, input: NewDelegationInput, now: Date): NewDelegationRow {
  const id = randomUUID();
  const expiresAt = new Date(now.getTime() + input.durationSecs * 1000);
  return {
    id,
    userId: owner.userId,
    provider: input.provider,
    status: 'Active',
    currency: input.currency,
    spendingLimitCents: input.spendingLimitCents,
    allowedRecipients: input.allowedRecipients ?? null,
    planId: input.planId ?? null,
    apiKeyId: input.apiKeyId ?? null,
    providerPaymentMethodId: input.providerPaymentMethodId ?? null,
    orgWalletId: input.orgWalletId ?? null,
    groupId: input.orgWalletId === undefined ? null : (input.groupId ?? null),
    expiresAt,
    createdAt: now,
  };
}

const delegationNotFound = (delegationId: string): AppError =>
  new AppError('BCK.DELEGATION.0001', { details: `delegation ${delegationId} not found` });

async function ownDelegation(ctx: ServiceContext, userId: string, delegationId: string) {
  const d = await findOwnDelegation(ctx.db.em(), userId, delegationId);
  if (d === null) throw delegationNotFound(delegationId);
  return d;
}

export async function getDelegation(
  ctx: ServiceContext,
  userId: string,
  delegationId: string,
): Promise<DelegationRecord> {
  return delegationRecord(await ownDelegation(ctx, userId, delegationId), ctx.now());
}

/**
 * A connector's read: only its grant's own delegation. Any other id, even one of the same user's, is the 404 of an
 * unknown delegation, word for word, so a connector learns nothing of the user's other delegations.
 */
export async function getGrantDelegation(
  ctx: ServiceContext,
  grant: { userId: string; delegationId: string },
  delegationId: string,
): Promise<DelegationRecord> {
  if (delegationId.toLowerCase() !== grant.delegationId.toLowerCase()) throw delegationNotFound(delegationId);
  return getDelegation(ctx, grant.userId, delegationId);
}

export async function listDelegations(
  ctx: ServiceContext,
  caller: { userId: string; apiKeyId: string },
  q: { page: number; offset: number; accessible?: boolean | undefined; status?: DelegationStatus | undefined },
): Promise<{ total: number; page: number; offset: number; delegations: DelegationRecord[] }> {
  const now = ctx.now();
  const { rows, total } = await delegationsPage(ctx.db.em(), caller, q, now);
  return { total, page: q.page, offset: q.offset, delegations: rows.map((r) => delegationRecord(r, now)) };
}

export async function revokeDelegation(
  ctx: ServiceContext,
  userId: string,
  delegationId: string,
): Promise<{ success: true; delegationId: string; status: 'Revoked' }> {
  await ownDelegation(ctx, userId, delegationId);
  await revokeActive(ctx.db.em(), userId, delegationId, ctx.now());
  return { success: true, delegationId, status: 'Revoked' };
}

export async function listDelegationTransactions(
  ctx: ServiceContext,
  userId: string,
  delegationId: string,
  q: { page: number; offset: number },
) {
  await ownDelegation(ctx, userId, delegationId);
  const { rows, total } = await transactionsPage(ctx.db.em(), delegationId, q);
  return {
    total,
    page: q.page,
    offset: q.offset,
    transactions: rows.map((t) => ({
      transactionId: t.id,
      kind: t.kind,
      amountCents: toWire(t.amountCents),
      reference: t.reference ?? null,
      description: t.description ?? null,
      createdAt: t.createdAt.toISOString(),
    })),
  };
}
