// The API description of x402 delegated permissions (admin/routes/x402.ts).
import { type Operations, json } from './operation.js';
import {
  PermissionCreated,
  PermissionPage,
  PermissionRecord,
  PermissionRevoked,
  SettleResult,
  VerifyResult,
} from './responses/x402.js';
import {
  CreatePermissionBody,
  ListPermissionsQuery,
  PermissionHashParam,
  SettleBody,
  VerifyBody,
} from '../../shared/x402/requests.js';

const hash = { permissionHash: PermissionHashParam };

const paymentRequired = {
  x402Version: 2,
  resource: { url: 'https://agent.example.com/api/v1/ask' },
  accepts: [{ scheme: 'svc:erc4337', network: 'eip155:84532', planId: '1' }],
};

export const X402_OPERATIONS: Operations = {
  'POST /api/v1/x402/permissions': {
    summary: 'Create a permission',
    description:
      "An x402 access token for a plan (and optionally an agent), signed (EIP-712) by the caller's wallet. With a delegation (`delegationConfig`), settle orders the plan when credits fall short. A connector's `account_access` token may create only `svc:card-delegation` permissions on its grant's delegation.",
    tags: ['x402'],
    request: {
      body: CreatePermissionBody,
      example: {
        resource: { url: 'https://agent.example.com/api/v1/ask' },
        accepted: { scheme: 'svc:erc4337', network: 'eip155:84532', planId: '1' },
      },
    },
    responses: { 201: json('Created; the token is shown only here.', PermissionCreated) },
    codes: [
      'BCK.HTTP.0400',
      'BCK.PROTOCOL.0003',
      'BCK.PROTOCOL.0004',
      'BCK.PROTOCOL.0062',
      'BCK.CREDITS.0003',
      'BCK.X402.0002',
      'BCK.X402.0003',
      'BCK.OAUTH.0030',
    ],
  },
  'GET /api/v1/x402/permissions': {
    summary: 'List your permissions',
    tags: ['x402'],
    request: { query: ListPermissionsQuery },
    responses: { 200: json('A page of permissions.', PermissionPage) },
    codes: ['BCK.HTTP.0400'],
  },
  'GET /api/v1/x402/permissions/:permissionHash': {
    summary: 'Read a permission',
    tags: ['x402'],
    request: { path: hash },
    responses: { 200: json('The permission.', PermissionRecord) },
    codes: ['BCK.X402.0001'],
  },
  'DELETE /api/v1/x402/permissions/:permissionHash': {
    summary: 'Revoke a permission',
    tags: ['x402'],
    request: { path: hash },
    responses: { 200: json('Revoked.', PermissionRevoked) },
    codes: ['BCK.X402.0001'],
  },
  'POST /api/v1/x402/verify': {
    summary: 'Verify a permission',
    description:
      'The agent checks, before serving, that the presented token is good for its 402 and can pay `maxAmount` now. Consumes nothing; anything wrong with the token is `isValid: false`.',
    tags: ['x402'],
    request: { body: VerifyBody, example: { paymentRequired, x402AccessToken: 'eyJ...', maxAmount: '1' } },
    responses: {
      201: json('The verdict.', VerifyResult, {
        isValid: true,
        payer: '0x000000000000000000000000000000000000dEaD',
        network: 'eip155:84532',
      }),
    },
    codes: ['BCK.HTTP.0400'],
  },
  'POST /api/v1/x402/settle': {
    summary: 'Settle a permission',
    description:
      'The agent burns what a served request cost, once per `agentRequestId` (a repeat answers the first result with `duplicate: true`). When credits fall short and the permission names a delegation, one order of the plan is paid through it first.',
    tags: ['x402'],
    request: {
      body: SettleBody,
      example: { paymentRequired, x402AccessToken: 'eyJ...', maxAmount: '1', agentRequestId: 'req-1' },
    },
    responses: { 201: json('The settlement.', SettleResult) },
    codes: ['BCK.HTTP.0400', 'BCK.CREDITS.0003', 'BCK.PROTOCOL.0062', 'BCK.ROUTER.0003', 'BCK.PAYMENT.0001'],
  },
};
