// The API description of organizations (admin/routes/org-members.ts, org-wallets.ts, org-budgets.ts). Every route
// resolves the caller's membership first: not a member is 404 BCK.ORG.0001, a Member managing 403 BCK.ORG.0002.
import { type Operations, json } from './operation.js';
import { Success } from './responses/common.js';
import {
  ActivityPage,
  BudgetResult,
  Budgets,
  GroupMembers,
  GroupPage,
  GroupResult,
  MemberPage,
  MemberResult,
  Memberships,
  OrganizationResult,
  PaymentMethodResult,
  PaymentMethods,
  WalletBalances,
  WalletGroups,
  WalletResult,
  Wallets,
} from './responses/organizations.js';
import {
  ActivityQuery,
  AddGroupMemberBody,
  AddMemberBody,
  ChangeRoleBody,
  CreateBudgetBody,
  CreateGroupBody,
  CreateOrganizationBody,
  ListGroupsQuery,
  PageQuery,
  UpdateBudgetBody,
  UpdateGroupBody,
} from '../../shared/organizations/requests.js';
import { SharePaymentMethodBody, enrollPaymentMethodBody } from '../../shared/organizations/payment-methods.js';
import { CreateWalletBody } from '../../shared/organizations/wallets.js';
import { UuidPath } from './params.js';

const ORG = '/api/v1/organizations/:orgId';
const GROUP = `${ORG}/groups/:groupId`;
const WALLET = `${ORG}/wallets/:walletId`;
const BUDGETS = `${GROUP}/budgets`;

const org = { orgId: UuidPath };
const group = { ...org, groupId: UuidPath };
const wallet = { ...org, walletId: UuidPath };
const done = json('Done.', Success, { success: true });
const tags = ['Organizations'] as const;

export const ORGANIZATION_OPERATIONS: Operations = {
  'POST /api/v1/organizations': {
    summary: 'Create an organization',
    description: 'Its creator is its first Admin.',
    tags,
    request: { body: CreateOrganizationBody, example: { name: 'Acme' } },
    responses: { 201: json('Created.', OrganizationResult) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/organizations/my-memberships': {
    summary: 'Your organizations',
    tags,
    responses: { 200: json('Your active memberships.', Memberships) },
    codes: [],
  },
  [`POST ${ORG}/members`]: {
    summary: 'Add a member',
    description: 'By `userId` or `email`; the role is Member unless said otherwise.',
    tags,
    request: { path: org, body: AddMemberBody, example: { email: 'bob@example.com' } },
    responses: { 201: json('Added; `memberId` is what the group endpoints take.', MemberResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0004', 'BCK.ORG.0008'],
  },
  [`GET ${ORG}/members`]: {
    summary: 'List members',
    tags,
    request: { path: org, query: PageQuery },
    responses: { 200: json('A page of members.', MemberPage) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001'],
  },
  [`PATCH ${ORG}/members/:memberId`]: {
    summary: "Change a member's role",
    description: 'The last active Admin cannot be demoted.',
    tags,
    request: { path: { ...org, memberId: UuidPath }, body: ChangeRoleBody, example: { role: 'Admin' } },
    responses: { 200: json('Changed.', MemberResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0004', 'BCK.ORG.0009'],
  },
  [`DELETE ${ORG}/members/:memberId`]: {
    summary: 'Remove a member',
    description: 'The last active Admin cannot be removed.',
    tags,
    request: { path: { ...org, memberId: UuidPath } },
    responses: { 200: done },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0004', 'BCK.ORG.0009'],
  },
  [`POST ${ORG}/groups`]: {
    summary: 'Create a group',
    tags,
    request: { path: org, body: CreateGroupBody, example: { name: 'Research agents' } },
    responses: { 201: json('Created.', GroupResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0008'],
  },
  [`GET ${ORG}/groups`]: {
    summary: 'List groups',
    description: 'An Admin sees every group; a Member the groups they belong to.',
    tags,
    request: { path: org, query: ListGroupsQuery },
    responses: { 200: json('A page of groups.', GroupPage) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001'],
  },
  [`GET ${GROUP}`]: {
    summary: 'Read a group',
    tags,
    request: { path: group },
    responses: { 200: json('The group.', GroupResult) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0003'],
  },
  [`PATCH ${GROUP}`]: {
    summary: 'Rename, deactivate or reactivate a group',
    tags,
    request: { path: group, body: UpdateGroupBody, example: { name: 'Research' } },
    responses: { 200: json('Changed.', GroupResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003', 'BCK.ORG.0008'],
  },
  [`DELETE ${GROUP}`]: {
    summary: 'Deactivate a group',
    description: 'Soft: the group keeps its members, shares and history and takes nothing new.',
    tags,
    request: { path: group },
    responses: { 200: json('Deactivated.', GroupResult) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003'],
  },
  [`POST ${GROUP}/members`]: {
    summary: 'Add a member to a group',
    tags,
    request: { path: group, body: AddGroupMemberBody },
    responses: { 201: done },
    codes: [
      'BCK.HTTP.0400',
      'BCK.ORG.0001',
      'BCK.ORG.0002',
      'BCK.ORG.0003',
      'BCK.ORG.0004',
      'BCK.ORG.0008',
      'BCK.ORG.0010',
    ],
  },
  [`GET ${GROUP}/members`]: {
    summary: "List a group's members",
    tags,
    request: { path: group },
    responses: { 200: json('The members.', GroupMembers) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0003'],
  },
  [`DELETE ${GROUP}/members/:memberId`]: {
    summary: 'Remove a member from a group',
    tags,
    request: { path: { ...group, memberId: UuidPath } },
    responses: { 200: done },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003', 'BCK.ORG.0004'],
  },
  [`GET ${ORG}/activity`]: {
    summary: 'The activity log',
    description: 'Who did what, and the budget alerts; newest first. `from` inclusive, `to` exclusive.',
    tags,
    request: { path: org, query: ActivityQuery },
    responses: { 200: json('A page of entries.', ActivityPage) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002'],
  },

  [`POST ${ORG}/wallets`]: {
    summary: 'Create an organization wallet',
    tags,
    request: { path: org, body: CreateWalletBody, example: { label: 'Marketing' } },
    responses: { 201: json('Created.', WalletResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002'],
  },
  [`GET ${ORG}/wallets`]: {
    summary: 'List organization wallets',
    tags,
    request: { path: org },
    responses: { 200: json('The wallets.', Wallets) },
    codes: ['BCK.ORG.0001'],
  },
  [`GET ${WALLET}/balances`]: {
    summary: "A wallet's balances",
    tags,
    request: { path: wallet },
    responses: { 200: json('What the wallet holds.', WalletBalances) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0005', 'BCK.CHAIN.0001'],
  },
  [`GET ${WALLET}/groups`]: {
    summary: 'The groups a wallet is shared with',
    tags,
    request: { path: wallet },
    responses: { 200: json('The groups.', WalletGroups) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0005'],
  },
  [`POST ${WALLET}/groups/:groupId`]: {
    summary: 'Share a wallet with a group',
    tags,
    request: { path: { ...wallet, groupId: UuidPath } },
    responses: { 200: done },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003', 'BCK.ORG.0005', 'BCK.ORG.0008', 'BCK.ORG.0010'],
  },
  [`DELETE ${WALLET}/groups/:groupId`]: {
    summary: 'Unshare a wallet',
    tags,
    request: { path: { ...wallet, groupId: UuidPath } },
    responses: { 200: done },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003', 'BCK.ORG.0005', 'BCK.ORG.0020'],
  },
  [`GET ${GROUP}/wallets`]: {
    summary: 'The wallets shared with a group',
    tags,
    request: { path: group },
    responses: { 200: json('The wallets.', Wallets) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0003'],
  },
  [`POST ${ORG}/payment-methods`]: {
    summary: 'Enroll a card',
    description: 'A sandbox payment method: only brand, last four digits and expiry are stored.',
    tags,
    request: {
      path: org,
      body: enrollPaymentMethodBody(new Date()),
      example: { brand: 'visa', last4: '4242', expMonth: 12, expYear: new Date().getUTCFullYear() + 2 },
    },
    responses: { 201: json('Enrolled.', PaymentMethodResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002'],
  },
  [`GET ${ORG}/payment-methods`]: {
    summary: 'List enrolled cards',
    tags,
    request: { path: org },
    responses: { 200: json('The cards.', PaymentMethods) },
    codes: ['BCK.ORG.0001'],
  },
  [`POST ${GROUP}/payment-methods`]: {
    summary: 'Share a card with a group',
    tags,
    request: { path: group, body: SharePaymentMethodBody },
    responses: { 200: done },
    codes: [
      'BCK.HTTP.0400',
      'BCK.ORG.0001',
      'BCK.ORG.0002',
      'BCK.ORG.0003',
      'BCK.ORG.0007',
      'BCK.ORG.0008',
      'BCK.ORG.0010',
    ],
  },

  [`POST ${BUDGETS}`]: {
    summary: 'Create a group budget',
    description: 'One per currency; `interval` month (default), year or one_shot.',
    tags,
    request: {
      path: group,
      body: CreateBudgetBody,
      example: { spendingLimitCents: '50000', currency: 'usd', alertThresholdPct: 80 },
    },
    responses: { 201: json('Created.', BudgetResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003', 'BCK.ORG.0008'],
  },
  [`GET ${BUDGETS}`]: {
    summary: "List a group's budgets",
    tags,
    request: { path: group },
    responses: { 200: json('The budgets.', Budgets) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0003'],
  },
  [`GET ${BUDGETS}/:budgetId`]: {
    summary: 'Read a group budget',
    tags,
    request: { path: { ...group, budgetId: UuidPath } },
    responses: { 200: json('The budget in its current period.', BudgetResult) },
    codes: ['BCK.ORG.0001', 'BCK.ORG.0003', 'BCK.ORG.0006'],
  },
  [`PATCH ${BUDGETS}/:budgetId`]: {
    summary: 'Change a group budget',
    tags,
    request: {
      path: { ...group, budgetId: UuidPath },
      body: UpdateBudgetBody,
      example: { spendingLimitCents: '80000' },
    },
    responses: { 200: json('Changed.', BudgetResult) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0001', 'BCK.ORG.0002', 'BCK.ORG.0003', 'BCK.ORG.0006'],
  },
};
