// The load-test kit's scenarios: one router path each, driven at a number of connections for a time, every answer
// checked as loadtest/k6/<scenario>.ts checks it (a failed check is an error of the run).
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { type Limits, cannon, closedLoop, mintCall, mintTarget, relayRequests, routeCall } from './load.js';
import type { Sink } from './stats.js';
import type { World } from './world.js';

export const SCENARIOS = ['relay', 'paid', 'mint', 'commerce'] as const;
export type Scenario = (typeof SCENARIOS)[number];

interface ScenarioSpec {
  /** What is called, and what counts as a success. */
  readonly description: string;
  /** Connections (calls in flight) unless told otherwise: the benchmark's. */
  readonly connections: number;
  /** Whether it needs a commerce access token. */
  readonly commerce: boolean;
}

export const SPECS: Record<Scenario, ScenarioSpec> = {
  relay: {
    description:
      'ALL /api/v1/router/proxy to the free upstream, GET and a small JSON POST alternating, a fresh ' +
      'X-Router-Request-Id each; a success is a 2xx',
    connections: 32,
    commerce: false,
  },
  paid: {
    description:
      'POST /api/v1/router/route paying the @x402/express v2 merchant with the API key and delegation of the user; a ' +
      'success is a 200 with the 200 of the merchant relayed, paid and Settled',
    connections: 16,
    commerce: false,
  },
  mint: {
    description:
      'POST /api/v1/router/payments (mode A) minting an x402 v2 credential for the 402 of the merchant; a success is a ' +
      '200 with a credential',
    connections: 16,
    commerce: false,
  },
  commerce: {
    description:
      'POST /api/v1/router/commerce/route with a commerce access token paying the @x402/express v2 merchant; a ' +
      'success is a 200 with the 200 of the merchant relayed, paid and Settled',
    connections: 16,
    commerce: true,
  },
};

/** Drives `scenario` against the world for `seconds` (or until the signal), reporting every call to the sink. */
export async function runScenario(
  scenario: Scenario,
  w: World,
  o: { seconds: number; connections: number; sink: Sink; signal: AbortSignal },
): Promise<void> {
  const limits: Limits = { signal: o.signal };
  if (scenario === 'relay') {
    await cannon(w.stack.proxyUrl, relayRequests(w.apiKey, w.delegationId, w.upstream.url), {
      seconds: o.seconds,
      connections: o.connections,
      sink: o.sink,
      signal: o.signal,
    });
    return;
  }
  const pool = new Pool(w.stack.proxyUrl, { connections: o.connections, keepAliveTimeout: 60_000 });
  const runId = randomUUID().slice(0, 8);
  let n = 0;
  const requestId = () => {
    n += 1;
    return `${scenario}-${runId}-${n}`;
  };
  const paidUrl = `${w.merchant.url}/paid`;
  try {
    let once: () => Promise<void>;
    if (scenario === 'paid') {
      once = () =>
        routeCall(pool, {
          path: '/api/v1/router/route',
          bearer: w.apiKey,
          body: { requestId: requestId(), delegationId: w.delegationId, url: paidUrl, method: 'GET' },
          paid: true,
        });
    } else if (scenario === 'commerce') {
      const token = w.commerce?.token;
      if (token === undefined) throw new Error('no commerce access token');
      once = () =>
        routeCall(pool, {
          path: '/api/v1/router/commerce/route',
          bearer: token,
          body: { requestId: requestId(), url: paidUrl, method: 'GET' },
          paid: true,
        });
    } else {
      const target = await mintTarget(w.merchant.url);
      once = () => mintCall(pool, { apiKey: w.apiKey, delegationId: w.delegationId, target, requestId: requestId() });
    }
    await closedLoop(o.seconds, o.connections, once, o.sink, limits);
  } finally {
    await pool.close();
  }
}
