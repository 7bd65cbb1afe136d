// Merchant (a): x402 v2 with the official @x402/express `paymentMiddleware`, on an in-process `x402Facilitator`
// running @x402/evm's `ExactEvmScheme` facilitator. Only the chain is stubbed (chain.ts); the resource server's
// matching of `accepted` and the facilitator's checks (signature, recipient, time window, amount, simulation,
// settlement receipt) are the libraries' own.
//
// It offers EURC first and USDC second, so the router's "prefer USDC" is exercised against a real 402.
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { FacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import { StubChain } from './chain.js';
import { type Running, listen } from './listen.js';

export const V2_NETWORK = 'eip155:84532';

export interface X402V2MerchantOptions {
  /** The stub chain, or the signer of a facilitator on a real chain (anvil: test/support/anvil.ts facilitatorSigner). */
  readonly chain: StubChain | FacilitatorEvmSigner;
  readonly payTo: string;
  /** USDC atomic amount of the paid route. */
  readonly usdcAmount: string;
  readonly usdc: { readonly address: string; readonly eip712: { readonly name: string; readonly version: string } };
  readonly eurc: { readonly address: string; readonly eip712: { readonly name: string; readonly version: string } };
  /** A fixed port (the load-test kit's documented one); a free one when absent. */
  readonly port?: number;
}

export interface X402V2Merchant extends Running {
  readonly paidPath: string;
  readonly freePath: string;
}

export async function startX402V2Merchant(o: X402V2MerchantOptions): Promise<X402V2Merchant> {
  const facilitator = new x402Facilitator().register(
    V2_NETWORK,
    new ExactEvmFacilitatorScheme(
      o.chain instanceof StubChain ? (o.chain as unknown as FacilitatorEvmSigner) : o.chain,
    ),
  );
  const client: FacilitatorClient = {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as never,
  };
  const server = new x402ResourceServer(client).register(V2_NETWORK, new ExactEvmServerScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /paid': {
          accepts: [
            {
              scheme: 'exact',
              network: V2_NETWORK,
              payTo: o.payTo,
              price: {
                amount: o.usdcAmount,
                asset: o.eurc.address,
                extra: { name: o.eurc.eip712.name, version: o.eurc.eip712.version },
              },
              maxTimeoutSeconds: 300,
            },
            {
              scheme: 'exact',
              network: V2_NETWORK,
              payTo: o.payTo,
              price: {
                amount: o.usdcAmount,
                asset: o.usdc.address,
                extra: { name: o.usdc.eip712.name, version: o.usdc.eip712.version },
              },
              maxTimeoutSeconds: 300,
            },
          ],
          description: 'A paid answer',
          mimeType: 'application/json',
        },
      },
      server,
    ),
  );
  app.get('/paid', (_req, res) => {
    res.json({ answer: 42 });
  });
  app.get('/free', (_req, res) => {
    res.json({ free: true });
  });
  const running = await listen(app, o.port);
  return { ...running, paidPath: '/paid', freePath: '/free' };
}
