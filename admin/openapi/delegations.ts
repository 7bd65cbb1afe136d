// The API description of spending delegations (admin/routes/delegations.ts).
import { CreateDelegationBody, ListDelegationsQuery } from '../../shared/delegations/requests.js';
import { type Operations, json } from './operation.js';
import {
  DelegationCreated,
  DelegationPage,
  DelegationRecord,
  DelegationRevoked,
  DelegationTransactionPage,
} from './responses/delegations.js';
import { PageQuery } from '../http/pagination.js';
import { DelegationId } from '../routes/delegations.js';

const id = { id: DelegationId };

export const DELEGATION_OPERATIONS: Operations = {
  'POST /api/v1/delegation/create': {
    summary: 'Create a delegation',
    description:
      "A capped, expiring spending authority. `erc4337` pays from the caller's custodial wallet, or from an organization wallet shared with one of the caller's groups (`organizationWalletId`, `groupId`: charged to the group's budget too); the fiat providers are card-backed and also answer a `delegationToken`.",
    tags: ['Delegations'],
    request: {
      body: CreateDelegationBody,
      example: { provider: 'erc4337', spendingLimitCents: '500', durationSecs: 86400, currency: 'usd' },
    },
    responses: { 201: json('Created.', DelegationCreated, { delegationId: '0194f3f6-2a5e-4c4e-9b1a-6f1d2c3b4a59' }) },
    codes: ['BCK.HTTP.0400', 'BCK.ORG.0003', 'BCK.ORG.0005'],
  },
  'GET /api/v1/delegation': {
    summary: 'List your delegations',
    description: 'Newest first; `accessible=true` keeps those the calling key may spend now.',
    tags: ['Delegations'],
    request: { query: ListDelegationsQuery },
    responses: { 200: json('A page of delegations.', DelegationPage) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/delegation/:id': {
    summary: 'Read a delegation',
    description: "Your delegation; a connector's token reads only its grant's own.",
    tags: ['Delegations'],
    request: { path: id },
    responses: { 200: json('The delegation.', DelegationRecord) },
    codes: ['BCK.DELEGATION.0001'],
  },
  'DELETE /api/v1/delegation/:id': {
    summary: 'Revoke a delegation',
    tags: ['Delegations'],
    request: { path: id },
    responses: { 200: json('Revoked.', DelegationRevoked) },
    codes: ['BCK.DELEGATION.0001'],
  },
  'GET /api/v1/delegation/:id/transactions': {
    summary: "A delegation's journal",
    description: "Every charge and release of the delegation's cap, newest first.",
    tags: ['Delegations'],
    request: { path: id, query: PageQuery },
    responses: { 200: json('A page of the journal.', DelegationTransactionPage) },
    codes: ['BCK.HTTP.0400', 'BCK.DELEGATION.0001'],
  },
};
