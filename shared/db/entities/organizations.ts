// Organizations: members, groups, shared organization wallets and cards, and one budget per (group, currency).
// Every row carries its organization's id, so any read can be scoped to the caller's organization in its WHERE.
import { defineEntity, p } from '@mikro-orm/core';
import { Int64Type } from '../int64-type.js';

export const ORG_ROLES = ['Admin', 'Member'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** How a budget's period runs: calendar months or years (UTC), or one period that never rolls. */
export const BUDGET_INTERVALS = ['month', 'year', 'one_shot'] as const;
export type BudgetInterval = (typeof BUDGET_INTERVALS)[number];

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organization',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    createdByUserId: p.string(),
    createdAt: p.datetime(),
  },
});

/** A user's place in an organization; its id is the `memberId` the group endpoints take. Removal is soft. */
export const OrgMembership = defineEntity({
  name: 'OrgMembership',
  tableName: 'org_membership',
  uniques: [{ properties: ['orgId', 'userId'] }],
  indexes: [{ properties: ['userId'] }],
  properties: {
    id: p.string().primary(),
    orgId: p.string(),
    userId: p.string(),
    role: p.enum(ORG_ROLES),
    active: p.boolean(),
    createdAt: p.datetime(),
    removedAt: p.datetime().nullable(),
  },
});

/** A team of members; deleting it deactivates it (its budgets, shares and history stay). */
export const OrgGroup = defineEntity({
  name: 'OrgGroup',
  tableName: 'org_group',
  indexes: [{ properties: ['orgId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    orgId: p.string(),
    name: p.string(),
    active: p.boolean(),
    createdAt: p.datetime(),
  },
});

export const OrgGroupMember = defineEntity({
  name: 'OrgGroupMember',
  tableName: 'org_group_member',
  // A member's groups (access checks, removing a member from every group of the organization).
  indexes: [{ properties: ['membershipId'] }],
  properties: {
    groupId: p.string().primary(),
    membershipId: p.string().primary(),
    orgId: p.string(),
    createdAt: p.datetime(),
  },
});

/** A custodial wallet of the organization (key sealed with AES-256-GCM, as users' wallets are). */
export const OrgWallet = defineEntity({
  name: 'OrgWallet',
  tableName: 'org_wallet',
  indexes: [{ properties: ['orgId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    orgId: p.string(),
    label: p.string(),
    address: p.string().unique(),
    walletKeyEnc: p.text(),
    createdAt: p.datetime(),
  },
});

export const OrgWalletShare = defineEntity({
  name: 'OrgWalletShare',
  tableName: 'org_wallet_share',
  indexes: [{ properties: ['groupId'] }],
  properties: {
    walletId: p.string().primary(),
    groupId: p.string().primary(),
    orgId: p.string(),
    createdAt: p.datetime(),
  },
});

/** An enrolled card (a sandbox payment method: no card number is ever stored, only what a receipt shows). */
export const OrgPaymentMethod = defineEntity({
  name: 'OrgPaymentMethod',
  tableName: 'org_payment_method',
  indexes: [{ properties: ['orgId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    orgId: p.string(),
    brand: p.string(),
    last4: p.string(),
    expMonth: p.integer(),
    expYear: p.integer(),
    createdAt: p.datetime(),
  },
});

export const OrgPaymentMethodShare = defineEntity({
  name: 'OrgPaymentMethodShare',
  tableName: 'org_payment_method_share',
  indexes: [{ properties: ['groupId'] }],
  properties: {
    paymentMethodId: p.string().primary(),
    groupId: p.string().primary(),
    orgId: p.string(),
    createdAt: p.datetime(),
  },
});

/**
 * A group's budget in one currency: a capped account of the spend module. `amountSpentCents` counts the period
 * [periodStart, periodEnd); the first charge at or after `periodEnd` starts the next period in the same conditional
 * UPDATE, so no job rolls periods. A `one_shot` budget's period never ends (periodEnd null). `Exhausted` is not
 * stored: it is read off the spent amount, as a delegation's is.
 */
export const GroupBudget = defineEntity({
  name: 'GroupBudget',
  tableName: 'group_budget',
  uniques: [{ properties: ['groupId', 'currency'] }],
  properties: {
    id: p.string().primary(),
    orgId: p.string(),
    groupId: p.string(),
    currency: p.string(),
    interval: p.enum(BUDGET_INTERVALS),
    spendingLimitCents: p.type(Int64Type),
    amountSpentCents: p.type(Int64Type).default(0),
    periodStart: p.datetime(),
    periodEnd: p.datetime().nullable(),
    alertThresholdPct: p.integer().nullable(),
    /** The start of the period whose threshold alert was recorded: one alert per period. */
    alertedPeriodStart: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** What the activity log records: the changes people make, and what the service notices about budgets. */
export const ACTIVITY_EVENTS = [
  'organization.created',
  'member.added',
  'member.role_changed',
  'member.removed',
  'group.created',
  'group.renamed',
  'group.deactivated',
  'group.reactivated',
  'group.member_added',
  'group.member_removed',
  'wallet.created',
  'wallet.shared',
  'wallet.unshared',
  'payment_method.enrolled',
  'payment_method.shared',
  'budget.created',
  'budget.updated',
  'budget.threshold_crossed',
  'budget.exhausted',
] as const;
export type ActivityEvent = (typeof ACTIVITY_EVENTS)[number];

/** Append-only: who did what in the organization, and the budget alerts. */
export const OrgActivity = defineEntity({
  name: 'OrgActivity',
  tableName: 'org_activity',
  indexes: [{ properties: ['orgId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    orgId: p.string(),
    /** One of ACTIVITY_EVENTS; a plain string column, so a new kind of event needs no migration. */
    eventType: p.string(),
    /** null for what the service did itself (a threshold alert, an exhaustion). */
    actorUserId: p.string().nullable(),
    subjectType: p.string(),
    subjectId: p.string(),
    details: p.json<Record<string, string | number | boolean | null>>(),
    createdAt: p.datetime(),
  },
});

/** Append-only: one row per charge (positive) or release (negative) of a group budget, with the period it fell in. */
export const GroupBudgetTransaction = defineEntity({
  name: 'GroupBudgetTransaction',
  tableName: 'group_budget_transaction',
  indexes: [{ properties: ['budgetId', 'createdAt'] }],
  properties: {
    id: p.string().primary(),
    budgetId: p.string(),
    kind: p.string(),
    amountCents: p.type(Int64Type),
    periodStart: p.datetime(),
    reference: p.string().nullable(),
    description: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
