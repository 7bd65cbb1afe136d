// What the organization endpoints answer: `{ success: true, ... }` around the views of shared/organizations.
import { z } from 'zod';
import { ACTIVITY_EVENTS, BUDGET_INTERVALS, ORG_ROLES } from '../../../shared/db/entities/index.js';
import type { ActivityView } from '../../../shared/organizations/activity-log.js';
import type { BudgetView } from '../../../shared/organizations/budget-view.js';
import type { GroupMemberView } from '../../../shared/organizations/group-members.js';
import type { GroupView } from '../../../shared/organizations/groups.js';
import type { MemberView, Paged } from '../../../shared/organizations/members.js';
import type { MembershipView, OrganizationView } from '../../../shared/organizations/organizations.js';
import { CARD_BRANDS } from '../../../shared/organizations/payment-methods.js';
import { Address, Decimal, type Fits, Id, Timestamp, named } from './common.js';

/** `{ success: true, <key>: <value> }`. */
const succeeded = <K extends string, S extends z.ZodType>(key: K, value: S) =>
  z.object({ success: z.literal(true), ...({ [key]: value } as Record<K, S>) });

const Meta = z.object({
  total: z.number().int().nonnegative(),
  page: z.number().int().positive(),
  limit: z.number().int().positive(),
});

/** `{ success: true, <key>: [...], meta }`: a page of `limit` rows. */
const pagedOf = <K extends string, S extends z.ZodType>(key: K, item: S) =>
  z.object({ success: z.literal(true), ...({ [key]: z.array(item) } as Record<K, z.ZodArray<S>>), meta: Meta });

const Organization = z.object({ orgId: Id, name: z.string(), createdAt: Timestamp });
const Membership = z.object({
  orgId: Id,
  orgName: z.string(),
  role: z.enum(ORG_ROLES),
  isAdmin: z.boolean(),
});
const Member = z.object({
  memberId: Id,
  userId: Id,
  email: z.string(),
  role: z.enum(ORG_ROLES),
  createdAt: Timestamp,
});
const Group = z.object({
  groupId: Id,
  name: z.string(),
  active: z.boolean(),
  memberCount: z.number().int().nonnegative(),
  createdAt: Timestamp,
});
const GroupMember = z.object({
  memberId: Id,
  userId: Id,
  email: z.string(),
  role: z.enum(ORG_ROLES),
  addedAt: Timestamp,
});
const Activity = z.object({
  id: Id,
  eventType: z.enum(ACTIVITY_EVENTS),
  /** null when the service noticed it itself (a budget alert). */
  actorUserId: Id.nullable(),
  subjectType: z.enum(['organization', 'member', 'group', 'wallet', 'payment_method', 'budget']),
  subjectId: z.string(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  createdAt: Timestamp,
});
const Wallet = z.object({ walletId: Id, label: z.string(), address: Address, createdAt: Timestamp });
const PaymentMethod = z.object({
  paymentMethodId: Id,
  brand: z.enum(CARD_BRANDS),
  last4: z.string().regex(/^[0-9]{4}$/),
  expMonth: z.number().int().min(1).max(12),
  expYear: z.number().int(),
  createdAt: Timestamp,
});
const Budget = z.object({
  budgetId: Id,
  groupId: Id,
  currency: z.string(),
  interval: z.enum(BUDGET_INTERVALS),
  spendingLimitCents: Decimal,
  amountSpentCents: Decimal,
  remainingBudgetCents: Decimal,
  /** Spent over limit in percent, rounded down to hundredths; above 100 after a limit was lowered. */
  percentUsed: z.number().nonnegative(),
  periodStart: Timestamp,
  /** null for a one-shot budget. */
  periodEnd: Timestamp.nullable(),
  alertThresholdPct: z.number().int().nullable(),
  status: z.enum(['Active', 'Exhausted']),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const OrganizationResult = named(
  'OrganizationResult',
  succeeded('organization', Organization),
  'The organization; its creator is its first Admin.',
);
export const Memberships = named(
  'Memberships',
  succeeded('memberships', z.array(Membership)),
  'The organizations the caller is an active member of.',
);
export const MemberResult = named('MemberResult', succeeded('member', Member), 'A member of the organization.');
export const MemberPage = named('MemberPage', pagedOf('members', Member), "A page of the organization's members.");
export const GroupResult = named('GroupResult', succeeded('group', Group), 'A group of the organization.');
export const GroupPage = named(
  'GroupPage',
  pagedOf('groups', Group),
  'A page of groups (a Member sees the groups they belong to).',
);
export const GroupMembers = named(
  'GroupMembers',
  succeeded('members', z.array(GroupMember)),
  'The members of a group.',
);
export const ActivityPage = named(
  'ActivityPage',
  pagedOf('activity', Activity),
  "A page of the organization's activity log, newest first.",
);
export const WalletResult = named('WalletResult', succeeded('wallet', Wallet), 'An organization wallet.');
export const Wallets = named('Wallets', succeeded('wallets', z.array(Wallet)), 'Organization wallets.');
export const WalletBalances = named(
  'WalletBalances',
  z.object({
    success: z.literal(true),
    walletId: Id,
    address: Address,
    balances: z.array(
      z.object({ asset: Address, symbol: z.string(), decimals: z.number().int().nonnegative(), amount: Decimal }),
    ),
  }),
  'What an organization wallet holds, per asset of the network (atomic units).',
);
export const WalletGroups = named(
  'WalletGroups',
  succeeded('groupIds', z.array(Id)),
  'The groups a wallet is shared with.',
);
export const PaymentMethodResult = named(
  'PaymentMethodResult',
  succeeded('paymentMethod', PaymentMethod),
  'An enrolled card (only brand, last four digits and expiry are stored).',
);
export const PaymentMethods = named(
  'PaymentMethods',
  succeeded('paymentMethods', z.array(PaymentMethod)),
  "The organization's enrolled cards.",
);
export const BudgetResult = named('BudgetResult', succeeded('budget', Budget), 'A group budget in its current period.');
export const Budgets = named('Budgets', succeeded('budgets', z.array(Budget)), "A group's budgets, one per currency.");

export type OrganizationFits = Fits<typeof Organization, OrganizationView>;
export type MembershipFits = Fits<typeof Membership, MembershipView>;
export type MemberFits = Fits<typeof Member, MemberView>;
export type MetaFits = Fits<typeof Meta, Paged>;
export type GroupFits = Fits<typeof Group, GroupView>;
export type GroupMemberFits = Fits<typeof GroupMember, GroupMemberView>;
export type ActivityFits = Fits<typeof Activity, ActivityView>;
export type BudgetFits = Fits<typeof Budget, BudgetView>;
