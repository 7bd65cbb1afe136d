// Merchant (b): x402 v1 with the official x402-express@1.2.0 `paymentMiddleware`, talking HTTP to a loopback
// facilitator (an express app serving /verify, /settle and /supported) that runs the x402@1.2.0 package's own
// `verify` / `settle` for `exact` on EVM. Only the chain is stubbed (chain.ts).
import express from 'express';
import { settle, verify } from 'x402/facilitator';
import { paymentMiddleware } from 'x402-express';
import type { StubChain } from './chain.js';
import { type Running, listen } from './listen.js';

export const V1_NETWORK = 'base-sepolia';

export interface X402V1MerchantOptions {
  readonly chain: StubChain;
  readonly payTo: `0x${string}`;
  readonly usdcAmount: string;
  readonly usdc: { readonly address: string; readonly eip712: { readonly name: string; readonly version: string } };
}

export interface X402V1Merchant extends Running {
  readonly paidPath: string;
  readonly facilitatorUrl: string;
  /** What the loopback facilitator answered, newest last (for assertions on the library's reasons). */
  readonly facilitatorLog: { op: 'verify' | 'settle'; response: Record<string, unknown> }[];
}

/** The facilitator: x402@1 verify/settle with the stub chain standing in for viem's connected client. */
async function startFacilitator(chain: StubChain, log: X402V1Merchant['facilitatorLog']): Promise<Running> {
  const client = Object.assign(Object.create(chain) as object, { chain: { id: chain.chainId } }) as never;
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.post('/verify', async (req, res) => {
    const response = (await verify(client, req.body.paymentPayload, req.body.paymentRequirements)) as unknown as Record<
      string,
      unknown
    >;
    log.push({ op: 'verify', response });
    res.json(response);
  });
  app.post('/settle', async (req, res) => {
    let response: Record<string, unknown>;
    try {
      response = (await settle(client, req.body.paymentPayload, req.body.paymentRequirements)) as unknown as Record<
        string,
        unknown
      >;
    } catch (err) {
      // x402@1 `settle` lets a reverted transferWithAuthorization throw; a facilitator reports it as a failure.
      response = {
        success: false,
        errorReason: 'invalid_transaction_state',
        transaction: '',
        network: req.body.paymentRequirements?.network,
        error: err instanceof Error ? err.message : String(err),
      };
    }
    log.push({ op: 'settle', response });
    res.json(response);
  });
  app.get('/supported', (_req, res) => {
    res.json({ kinds: [{ x402Version: 1, scheme: 'exact', network: V1_NETWORK }] });
  });
  return listen(app);
}

export async function startX402V1Merchant(o: X402V1MerchantOptions): Promise<X402V1Merchant> {
  const facilitatorLog: X402V1Merchant['facilitatorLog'] = [];
  const facilitator = await startFacilitator(o.chain, facilitatorLog);
  const app = express();
  app.use(
    paymentMiddleware(
      o.payTo,
      {
        'GET /paid': {
          price: {
            amount: o.usdcAmount,
            asset: { address: o.usdc.address as `0x${string}`, decimals: 6, eip712: { ...o.usdc.eip712 } },
          },
          network: V1_NETWORK,
          config: { description: 'A paid answer', mimeType: 'application/json', maxTimeoutSeconds: 60 },
        },
      },
      { url: facilitator.url as `${string}://${string}` },
    ),
  );
  app.get('/paid', (_req, res) => {
    res.json({ answer: 42 });
  });
  const running = await listen(app);
  return {
    url: running.url,
    paidPath: '/paid',
    facilitatorUrl: facilitator.url,
    facilitatorLog,
    close: async () => {
      await running.close();
      await facilitator.close();
    },
  };
}
