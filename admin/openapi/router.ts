// The API description of the payment router, served by the proxy process (proxy/routes/payments.ts, stream.ts).
import { type Operations, json } from './operation.js';
import { MintedCredential, PaymentPage, PaymentRecord, PaymentSummary, RouteResult } from './responses/router.js';
import {
  CommerceRouteBody,
  CredentialBody,
  PaymentsQuery,
  ProxyHeaders,
  RouteBody,
  SettledBody,
  SummaryQuery,
} from '../../shared/router/requests.js';
import { UuidPath } from './params.js';

const DELEGATION = '0194f3f6-2a5e-4c4e-9b1a-6f1d2c3b4a59';

/** What every paying route can answer: its input refused (the router's validation is BCK.ROUTER.0001), the
 * delegation's refusals, the wallet, the chain. */
const PAYING = [
  'BCK.ROUTER.0001',
  'BCK.ROUTER.0002',
  'BCK.ROUTER.0003',
  'BCK.ROUTER.0009',
  'BCK.ROUTER.0012',
  'BCK.CHAIN.0001',
] as const;

const MODE_B =
  'The router calls the merchant without payment; a 402 is decoded (x402 v1 body, x402 v2 `PAYMENT-REQUIRED`, MPP `WWW-Authenticate: Payment`), one fundable option is paid from the delegation (cap, then wallet, in one transaction) and the request is sent again with the credential. A free answer is relayed with `paid: false` and leaves no record. A `requestId` is spent once paid: the same one again is 409 naming the first payment.';

const stream = {
  summary: 'Streaming proxy (any method)',
  description: `${MODE_B} The request's method and body go upstream as they are; the answer streams back with \`X-Router-Payment-Id\`, \`X-Router-Payment-Status\` and \`X-Router-Tx-Hash\` when it was paid. Any method but CONNECT, TRACE and TRACK; the three paths are one route.`,
  tags: ['Router'],
  request: { headers: ProxyHeaders, relayedBody: true },
  responses: {
    200: {
      description: "The merchant's answer (its status, headers and body), streamed.",
      content: [{ type: '*/*' }],
      headers: {
        'x-router-payment-id': 'The payment, when the call was paid.',
        'x-router-payment-status': 'Its status: Settled, Issued or Failed.',
        'x-router-tx-hash': 'The settlement transaction, when the merchant named one.',
      },
    },
  },
  codes: [...PAYING, 'BCK.ROUTER.0007', 'BCK.DELEGATION.0001', 'BCK.HTTP.0502'],
} as const;

export const ROUTER_OPERATIONS: Operations = {
  'POST /api/v1/router/payments': {
    summary: 'Mint a payment credential (mode A)',
    description:
      "The caller fetched the merchant's 402 itself; the router pays one option of it from the delegation and answers the credential to attach to the re-sent request. An MPP challenge is paid once (409 BCK.ROUTER.0013 after).",
    tags: ['Router'],
    request: {
      body: CredentialBody,
      example: {
        delegationId: DELEGATION,
        protocol: 'x402',
        target: {
          x402Version: 2,
          accepts: [
            {
              scheme: 'exact',
              network: 'eip155:84532',
              asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
              amount: '10000',
              payTo: '0x000000000000000000000000000000000000bEEF',
              maxTimeoutSeconds: 60,
              extra: { name: 'USDC', version: '2' },
            },
          ],
        },
        requestId: 'order-42',
      },
    },
    responses: { 200: json('The credential.', MintedCredential) },
    codes: [...PAYING, 'BCK.ROUTER.0013', 'BCK.DELEGATION.0001'],
  },
  'POST /api/v1/router/route': {
    summary: 'Call a merchant and pay its 402 (mode B)',
    description: `${MODE_B} Name the merchant by \`url\`, or by an operator's \`slug\` and \`path\`.`,
    tags: ['Router'],
    request: {
      body: RouteBody,
      example: {
        requestId: 'order-43',
        delegationId: DELEGATION,
        url: 'https://merchant.example.com/api/report',
        method: 'POST',
        body: { q: 'weather' },
      },
    },
    responses: { 200: json("The merchant's answer.", RouteResult) },
    codes: [...PAYING, 'BCK.ROUTER.0007', 'BCK.DELEGATION.0001', 'BCK.HTTP.0502'],
  },
  'POST /api/v1/router/commerce/route': {
    summary: 'Call a merchant and pay its 402, as a connector',
    description: `Mode B for a connector's commerce token: the delegation is its grant's, never the body's (a \`delegationId\` is refused). ${MODE_B}`,
    tags: ['Router'],
    request: {
      body: CommerceRouteBody,
      example: { requestId: 'order-44', url: 'https://merchant.example.com/api/report', method: 'GET' },
    },
    responses: { 200: json("The merchant's answer.", RouteResult) },
    codes: [...PAYING, 'BCK.ROUTER.0007', 'BCK.HTTP.0502'],
  },
  'POST /api/v1/router/payments/:id/settled': {
    summary: "Record a payment's settlement",
    description:
      "Marks an Issued payment Settled with the transaction that settled it (once). With settlement on a chain, the transaction is checked: mined, successful, and using this payment's authorization.",
    tags: ['Router'],
    request: {
      path: { id: UuidPath },
      body: SettledBody,
      example: { txHash: `0x${'ab'.repeat(32)}` },
    },
    responses: { 200: json('The payment.', PaymentRecord) },
    codes: [
      'BCK.ROUTER.0001',
      'BCK.ROUTER.0004',
      'BCK.ROUTER.0005',
      'BCK.ROUTER.0014',
      'BCK.ROUTER.0015',
      'BCK.ROUTER.0016',
      'BCK.CHAIN.0001',
    ],
  },
  'GET /api/v1/router/payments': {
    summary: 'The ledger of router payments',
    description:
      "Newest first; `[from, to)` (a date-only `to` names its whole UTC day); `limit` rows per page (or the contract's `offset`; both must agree). A connector's commerce token sees its grant's payments only.",
    tags: ['Router'],
    request: { query: PaymentsQuery },
    responses: {
      200: {
        description: 'A page of payments (JSON), or every column of them as CSV with `format=csv`.',
        content: [{ type: 'application/json', schema: PaymentPage }, { type: 'text/csv' }],
        headers: { 'x-total-count': 'CSV only: the number of matching payments.' },
      },
    },
    codes: ['BCK.ROUTER.0001'],
  },
  'GET /api/v1/router/payments/summary': {
    summary: 'Payments per day, week or month',
    description: "The ledger's filters; buckets in UTC, weeks from Monday.",
    tags: ['Router'],
    request: { query: SummaryQuery },
    responses: { 200: json('The series.', PaymentSummary, { total: 2, series: [{ date: '2026-11-22', value: 2 }] }) },
    codes: ['BCK.ROUTER.0001'],
  },
  '* /api/v1/router/proxy': stream,
  '* /api/v1/proxy': stream,
  '* /proxy': stream,
};
