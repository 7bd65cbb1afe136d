// The demo merchants, all on one port, each built with its protocol's official library exactly as a merchant
// would build it: x402 v2 (@x402/express with an in-process @x402/core facilitator), x402 v1 (x402-express talking
// HTTP to an x402@1 facilitator served beside it), MPP (mppx's evm charge), an x402 v2 `upto` offer, and a free
// endpoint. Every facilitator settles on the LedgerChain (ledger-chain.ts), so a payment the router makes lands in
// payroute's sandbox ledger and nowhere else.
import { randomBytes } from 'node:crypto';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { FacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactFacilitator } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactServer } from '@x402/evm/exact/server';
import { UptoEvmScheme as UptoFacilitator } from '@x402/evm/upto/facilitator';
import { UptoEvmScheme as UptoServer } from '@x402/evm/upto/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import { Mppx } from 'mppx/server';
import { settle, verify } from 'x402/facilitator';
import { paymentMiddleware as paymentMiddlewareV1 } from 'x402-express';
import type { Asset } from '../shared/assets.js';
import { stubChainCharge } from '../test/support/merchants/mppx.js';
import type { LedgerChain } from './ledger-chain.js';

/** What every paid endpoint costs: 0.01 USDC (6 decimals). */
export const PRICE_ATOMIC = '10000';
const NETWORK_V2 = 'eip155:84532';
const NETWORK_V1 = 'base-sepolia';

/** The merchants' payees (addresses with no key anywhere: their ledger balances only grow). */
export const PAYEES = {
  v2: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  v1: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  mpp: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
} as const;

export const PATHS = {
  v2: '/x402/v2/weather',
  v1: '/x402/v1/weather',
  mpp: '/mpp/weather',
  upto: '/x402/v2/upto/summarize',
  free: '/free/time',
} as const;

const weather = (merchant: string) => ({ city: 'Lisbon', forecast: 'sunny', tempC: 21, merchant });

export function demoApp(chain: LedgerChain, usdc: Asset, origin: string): express.Express {
  const app = express();
  const signer = chain as unknown as FacilitatorEvmSigner;
  mountV1Facilitator(app, chain);

  const facilitator = new x402Facilitator()
    .register(NETWORK_V2, new ExactFacilitator(signer))
    .register(NETWORK_V2, new UptoFacilitator(signer));
  const client: FacilitatorClient = {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as never,
  };
  const server = new x402ResourceServer(client)
    .register(NETWORK_V2, new ExactServer())
    .register(NETWORK_V2, new UptoServer());
  const usdcPrice = {
    amount: PRICE_ATOMIC,
    asset: usdc.address,
    extra: { name: usdc.eip712.name, version: usdc.eip712.version },
  };
  app.use(
    paymentMiddleware(
      {
        [`GET ${PATHS.v2}`]: {
          accepts: [
            { scheme: 'exact', network: NETWORK_V2, payTo: PAYEES.v2, price: usdcPrice, maxTimeoutSeconds: 300 },
          ],
          description: "Today's weather (x402 v2)",
          mimeType: 'application/json',
        },
        [`POST ${PATHS.upto}`]: {
          accepts: [
            { scheme: 'upto', network: NETWORK_V2, payTo: PAYEES.v2, price: usdcPrice, maxTimeoutSeconds: 300 },
          ],
          description: 'A summary billed by length, up to 0.01 USDC (x402 upto)',
          mimeType: 'application/json',
        },
      },
      server,
    ),
  );
  app.use(
    paymentMiddlewareV1(
      PAYEES.v1,
      {
        [`GET ${PATHS.v1}`]: {
          price: { amount: PRICE_ATOMIC, asset: { address: usdc.address, decimals: 6, eip712: { ...usdc.eip712 } } },
          network: NETWORK_V1,
          config: { description: "Today's weather (x402 v1)", mimeType: 'application/json', maxTimeoutSeconds: 60 },
        },
      },
      { url: `${origin}/facilitator/v1` as `${string}://${string}` },
    ),
  );
  app.get(PATHS.v2, (_req, res) => {
    res.json(weather('x402 v2'));
  });
  app.get(PATHS.v1, (_req, res) => {
    res.json(weather('x402 v1'));
  });
  app.post(PATHS.upto, (_req, res) => {
    res.json({ summary: 'short' });
  });
  app.get(PATHS.free, (_req, res) => {
    res.json({ now: new Date().toISOString(), free: true });
  });
  mountMpp(app, chain);
  return app;
}

/** mppx's evm charge: 0.01 USDC per call, settled by executing the credential's authorization on the chain. */
function mountMpp(app: express.Express, chain: LedgerChain): void {
  const mppx = Mppx.create({
    methods: [stubChainCharge(chain, PAYEES.mpp, [])],
    // Binds each challenge id (HMAC); a new one per start, so a restart invalidates challenges it never issued.
    secretKey: randomBytes(32).toString('hex'),
    realm: 'payroute-demo',
  });
  const charge = Mppx.toNodeListener(mppx.charge({ amount: '0.01', description: "Today's weather (MPP)" }));
  app.get(PATHS.mpp, async (req, res, next) => {
    try {
      const result = await charge(req, res);
      if (result.status === 402) return;
      res.json(weather('mppx'));
    } catch (err) {
      next(err);
    }
  });
}

/** x402@1's own verify and settle behind the HTTP facilitator API x402-express calls. */
function mountV1Facilitator(app: express.Express, chain: LedgerChain): void {
  const client = Object.assign(Object.create(chain) as object, { chain: { id: chain.chainId } }) as never;
  const v1 = express.Router();
  v1.use(express.json({ limit: '64kb' }));
  v1.post('/verify', async (req, res) => {
    res.json(await verify(client, req.body.paymentPayload, req.body.paymentRequirements));
  });
  v1.post('/settle', async (req, res) => {
    try {
      res.json(await settle(client, req.body.paymentPayload, req.body.paymentRequirements));
    } catch (err) {
      // x402@1 lets a reverted transfer throw; a facilitator answers it as a failed settlement.
      res.json({
        success: false,
        errorReason: 'invalid_transaction_state',
        transaction: '',
        network: NETWORK_V1,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  });
  v1.get('/supported', (_req, res) => {
    res.json({ kinds: [{ x402Version: 1, scheme: 'exact', network: NETWORK_V1 }] });
  });
  app.use('/facilitator/v1', v1);
}
