// Samples of the router (the proxy process): payments, routing through the free merchant, the commerce route and
// the streaming proxy.
import { getAddress } from 'viem';
import type { EndpointCase, EndpointFixtures, SampleRequest } from './index.js';
import { USDC } from '../router-fixtures.js';
import { testAddress } from '../registry-builders.js';
import { SANDBOX_NETWORK } from '../x402.js';

/** An x402 v2 option a merchant might offer (USDC on Base Sepolia), for mode A. */
export const offer = () => ({
  scheme: 'exact',
  network: SANDBOX_NETWORK,
  asset: USDC.address,
  amount: '100',
  payTo: getAddress(testAddress(0xfeed)),
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
});

export const ROUTER_ENDPOINTS: Readonly<Record<string, EndpointCase>> = {
  'POST /api/v1/router/payments': {
    sample: async (f) => ({
      as: 'subscriber',
      body: {
        delegationId: f.delegationId,
        protocol: 'x402',
        target: { x402Version: 2, accepts: [offer()] },
        resourceUrl: `${f.merchantUrl}/paid`,
        requestId: f.fresh('mint'),
      },
    }),
    // A merchant's offers, decoded by the x402 codec, which refuses what it cannot pay.
    kinds: { 'body.target.accepts.**': 'opaque' },
  },
  'POST /api/v1/router/route': {
    sample: async (f) => ({
      as: 'subscriber',
      body: {
        requestId: f.fresh('route'),
        delegationId: f.delegationId,
        url: `${f.merchantUrl}/free`,
        method: 'POST',
        headers: { 'x-note': 'hello' },
        body: { q: 'hello', list: ['a', 'b'] },
      },
    }),
    // Forwarded as written: the JSON body, and header values (the outbound module checks those as header values).
    kinds: { 'body.body.**': 'opaque', 'body.headers.*': 'opaque' },
    keyed: ['body.headers'],
  },
  'POST /api/v1/router/payments/:id/settled': {
    sample: async (f) => ({ as: 'subscriber', params: { id: f.paymentId }, body: { txHash: `0x${'ab'.repeat(32)}` } }),
  },
  'GET /api/v1/router/payments': {
    sample: async (f) => ({
      as: 'subscriber',
      query: {
        delegationId: f.delegationId,
        from: '2020-01-01',
        to: '2099-12-31T00:00:00Z',
        format: 'json',
        limit: '10',
        page: '1',
      },
    }),
  },
  'GET /api/v1/router/payments/summary': {
    sample: async (f) => ({
      as: 'subscriber',
      query: { granularity: 'day', delegationId: f.delegationId, from: '2020-01-01', to: '2099-12-31' },
    }),
  },
  'POST /api/v1/router/commerce/route': {
    sample: async (f) => ({
      as: 'subscriber',
      apiKey: await f.commerceToken(),
      body: {
        requestId: f.fresh('commerce'),
        url: `${f.merchantUrl}/free`,
        method: 'POST',
        headers: { 'x-note': 'hello' },
        body: { q: 'hello' },
      },
    }),
    kinds: { 'body.body.**': 'opaque', 'body.headers.*': 'opaque' },
    keyed: ['body.headers'],
  },
  '* /api/v1/router/proxy': { sample: async (f) => proxySample(f) },
  '* /api/v1/proxy': { sample: async (f) => proxySample(f) },
  '* /proxy': { sample: async (f) => proxySample(f) },
};

function proxySample(f: EndpointFixtures): SampleRequest {
  return {
    as: 'subscriber',
    method: 'GET',
    headers: {
      'x-router-target-url': `${f.merchantUrl}/free`,
      'x-router-delegation-id': f.delegationId,
      'x-router-request-id': f.fresh('proxy'),
      'x-router-upstream-authorization': 'Bearer merchant-key',
    },
  };
}
