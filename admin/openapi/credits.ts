// The API description of credits and access (admin/routes/credits.ts, access-tokens.ts).
import {
  AgentIdParam,
  HolderParam,
  InitializeBody,
  MintBody,
  MintExpirableBody,
  RedeemBody,
  SubTaskBody,
} from '../../shared/credits/requests.js';
import { type Operations, json } from './operation.js';
import {
  AccessToken,
  BalanceResult,
  BurnResult,
  InitializedRequest,
  MintResult,
  OrderResult,
} from './responses/credits.js';
import { PlanIdPath } from './params.js';

const HOLDER = '0x000000000000000000000000000000000000dEaD';

export const CREDITS_OPERATIONS: Operations = {
  'POST /api/v1/protocol/plans/mint': {
    summary: 'Mint credits',
    description: "The plan's owner grants credits to any address; they never expire.",
    tags: ['Credits'],
    request: { body: MintBody, example: { planId: '1', holderAddress: HOLDER, amount: '10' } },
    responses: { 200: json('Minted.', MintResult) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003', 'BCK.PROTOCOL.0010'],
  },
  'POST /api/v1/protocol/plans/mintExpirable': {
    summary: 'Mint expiring credits',
    description: 'As mint; the lot stops counting `durationSecs` from now.',
    tags: ['Credits'],
    request: {
      body: MintExpirableBody,
      example: { planId: '1', holderAddress: HOLDER, amount: '10', durationSecs: 86400 },
    },
    responses: { 200: json('Minted.', MintResult) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003', 'BCK.PROTOCOL.0010'],
  },
  'POST /api/v1/protocol/plans/redeem': {
    summary: 'Redeem credits of an agent request',
    description:
      "The agent's owner burns what a served request cost, with the proof initialize returned: once per agent request, at most its `maxCredits`; soonest-expiring credits first.",
    tags: ['Credits'],
    request: { body: RedeemBody, example: { planId: '1', holderAddress: HOLDER, amount: '1', proof: 'eyJ...' } },
    responses: { 200: json('Burnt.', BurnResult) },
    codes: [
      'BCK.HTTP.0400',
      'BCK.PROTOCOL.0003',
      'BCK.PROTOCOL.0004',
      'BCK.PROTOCOL.0022',
      'BCK.PROTOCOL.0023',
      'BCK.PROTOCOL.0024',
      'BCK.PROTOCOL.0025',
      'BCK.CREDITS.0003',
    ],
  },
  'POST /api/v1/protocol/plans/:planId/order': {
    summary: 'Order a plan',
    description:
      "Pays the plan's price from the caller's custodial wallet (one movement per receiver) and grants its credits, in one transaction; with `SETTLEMENT_BACKEND=rpc` the transfers are sent on chain first. A connector's `account_access` token pays with its grant's card mandate instead.",
    tags: ['Credits'],
    request: { path: { planId: PlanIdPath } },
    responses: { 200: json('Bought.', OrderResult) },
    codes: [
      'BCK.HTTP.0400',
      'BCK.PROTOCOL.0003',
      'BCK.PROTOCOL.0062',
      'BCK.PAYMENT.0001',
      'BCK.ROUTER.0001',
      'BCK.ROUTER.0003',
      'BCK.CHAIN.0001',
      'BCK.CHAIN.0003',
      'BCK.CHAIN.0004',
    ],
  },
  'GET /api/v1/protocol/plans/:planId/balance/:holderAddress': {
    summary: 'Read a balance',
    description: "Any holder's unexpired credits of any plan (an account's wallet, or an address that held credits).",
    tags: ['Credits'],
    request: { path: { planId: PlanIdPath, holderAddress: HolderParam.shape.holderAddress } },
    responses: { 200: json('The balance.', BalanceResult) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003', 'BCK.PROTOCOL.0005'],
  },
  'POST /api/v1/protocol/agent-sub-tasks': {
    summary: 'Record a sub-task',
    description:
      "The agent's owner burns credits for one step of an agent request; a `tag` makes the step idempotent (`duplicate: true`).",
    tags: ['Credits'],
    request: {
      body: SubTaskBody,
      example: { agentRequestId: 'the-agent-request-id', creditsToRedeem: '1', tag: 'step-1', status: 'done' },
    },
    responses: { 200: json('Burnt.', BurnResult) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0024', 'BCK.PROTOCOL.0025', 'BCK.CREDITS.0003'],
  },
  'GET /api/v1/protocol/token/:planId/:agentId': {
    summary: 'Get an access token',
    description:
      "For the caller's wallet, which must hold credits of the plan; the plan must be attached to the agent.",
    tags: ['Credits'],
    request: { path: { planId: PlanIdPath, agentId: AgentIdParam } },
    responses: { 200: json('The token.', AccessToken) },
    codes: ['BCK.HTTP.0400', 'BCK.PROTOCOL.0003', 'BCK.PROTOCOL.0004', 'BCK.PROTOCOL.0040', 'BCK.CREDITS.0003'],
  },
  'POST /api/v1/protocol/agents/initialize/:agentId': {
    summary: 'Initialize an agent request',
    description:
      "The agent's owner presents the subscriber's access token and the endpoint being served; the proof allows burning at most `maxCredits` (default: the plan's `minAmount`).",
    tags: ['Credits'],
    request: {
      path: { agentId: AgentIdParam },
      body: InitializeBody,
      example: { accessToken: 'eyJ...', endpoint: 'https://agent.example.com/api/v1/ask', httpVerb: 'POST' },
    },
    responses: { 200: json('The agent request.', InitializedRequest) },
    codes: [
      'BCK.HTTP.0400',
      'BCK.PROTOCOL.0003',
      'BCK.PROTOCOL.0004',
      'BCK.PROTOCOL.0020',
      'BCK.PROTOCOL.0021',
      'BCK.PROTOCOL.0040',
      'BCK.CREDITS.0003',
    ],
  },
};
