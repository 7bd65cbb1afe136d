// Merchant (c): an MPP `evm` charge merchant built with mppx/server (`Mppx.create` + `evm.charge({currency,
// recipient, settle})`), fully offline: the `settle` hook executes the transferWithAuthorization on the stub chain
// (which reverts a reused nonce, a bad signature or an expired window, as FiatToken does; a revert is reported as
// mppx's VerificationFailedError, i.e. a 402, as its facilitator settlement does). mppx's own checks run
// before it: HMAC-bound challenge id, expiry, recipient, amount, challenge-hash nonce, validity window, EIP-712
// signature under the token's domain, `source`.
//
// Like every mppx evm charge route it also advertises x402 v2 (`PAYMENT-REQUIRED`) in the same 402 and accepts a
// `PAYMENT-SIGNATURE` credential for it: the router must pay one of the two, never both.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Errors } from 'mppx';
import { Mppx, evm } from 'mppx/server';
import { getAddress } from 'viem';
import type { StubChain } from './chain.js';
import { type Running, listen } from './listen.js';

export interface MppxMerchantOptions {
  readonly chain: StubChain;
  readonly recipient: string;
  /** Display amount in USDC units, e.g. '0.01' (mppx converts with the asset's decimals). */
  readonly amount: string;
  readonly realm?: string;
  /**
   * mppx's x402 route binding (x402/server/EvmCharge.ts): `required` refuses, on a scoped route (one with `meta`),
   * an x402 payment that does not carry mppx's binding (`extensions.mppx.info.nonce`, the route-bound nonce).
   */
  readonly routeBinding?: 'required' | 'resource';
  /** Server correlation data: makes the route scoped (the challenge's `opaque`). */
  readonly meta?: Record<string, string>;
}

export interface MppxMerchant extends Running {
  readonly paidPath: string;
  /** Settlements mppx asked for (after its own verification passed). */
  readonly settled: { reference: string; from: string; nonce: string }[];
}

/**
 * mppx's `evm.charge` settling on the stub chain: the transferWithAuthorization runs there (a revert is mppx's
 * VerificationFailedError, a 402, as its own facilitator settlement reports it: x402/server/EvmCharge.ts
 * `settleWithFacilitator`), and each settlement is recorded in `settled`.
 */
export function stubChainCharge(
  chain: StubChain,
  recipient: string,
  settled: MppxMerchant['settled'],
  routeBinding?: 'required' | 'resource',
) {
  const usdc = evm.assets.baseSepolia.USDC;
  return evm.charge({
    currency: usdc,
    recipient: getAddress(recipient),
    ...(routeBinding === undefined ? {} : { x402: { routeBinding } }),
    async settle({ payload }) {
      let reference: `0x${string}`;
      try {
        reference = await chain.writeContract({
          address: usdc.address,
          abi: [],
          functionName: 'transferWithAuthorization',
          args: [
            payload.from,
            payload.to,
            BigInt(payload.value),
            BigInt(payload.validAfter),
            BigInt(payload.validBefore),
            payload.nonce,
            payload.signature,
          ],
        });
      } catch (err) {
        throw new Errors.VerificationFailedError({
          reason: err instanceof Error ? err.message : 'settlement reverted',
        });
      }
      settled.push({ reference, from: payload.from, nonce: payload.nonce });
      return { reference };
    },
  });
}

export async function startMppxMerchant(o: MppxMerchantOptions): Promise<MppxMerchant> {
  const settled: MppxMerchant['settled'] = [];
  const mppx = Mppx.create({
    methods: [stubChainCharge(o.chain, o.recipient, settled, o.routeBinding)],
    secretKey: 'test-merchant-secret-key-at-least-32-bytes-long',
    realm: o.realm ?? 'mppx-merchant.test',
  });
  const listener = Mppx.toNodeListener(
    mppx.charge({
      amount: o.amount,
      description: 'A paid answer — MPP',
      ...(o.meta === undefined ? {} : { meta: o.meta }),
    }),
  );
  const running = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== '/paid') {
      res.writeHead(404).end();
      return;
    }
    try {
      const result = await listener(req, res);
      if (result.status === 402) return;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ answer: 42 }));
    } catch (err) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    }
  });
  return { ...running, paidPath: '/paid', settled };
}
