// The settlement backend a router payment is backed by (SETTLEMENT_BACKEND). `ledger`: the internal token ledger;
// the merchant leg (and a fee leg decided paid) moves in it as the payment is written. `rpc`: the chain holds the
// money; the payment reserves its legs against the wallet's on-chain balance (chain/reservations.ts), the merchant
// collects its leg with the authorization it was given, the operator collects the fee leg (chain/fee-collector.ts),
// and the reconciler (chain/reconciler.ts) learns from the chain which authorizations were used.
import { getAddress } from 'viem';
import type { Config } from '../../config/index.js';
import { NETWORKS } from '../assets.js';
import type { ServiceContext } from '../context.js';
import type { SqlTx } from '../db/sql.js';
import { type ChainClient, createChainClient } from './chain/client.js';
import { type BalanceReads, createBalanceReads } from './chain/balance-reads.js';
import { type NewReservation, feeReservationId, reserveIn } from './chain/reservations.js';
import { type Movement, applyMovements } from './token-ledger.js';

/** A signed payment's legs, as the issuance transaction backs them. */
export interface PaymentLegs {
  readonly paymentId: string;
  readonly buyer: string;
  readonly asset: string;
  readonly merchant: { readonly recipient: string; readonly amount: bigint };
  /** The signed authorization the merchant holds. */
  readonly authorization: { readonly nonce: string; readonly validBefore: bigint };
  /** A fee leg: `now` when it is decided paid at issuance (mode A), else it waits for the paid call's answer. */
  readonly fee?: { readonly recipient: string; readonly amount: bigint; readonly now: boolean } | undefined;
}

export interface FeeLeg {
  readonly paymentId: string;
  readonly buyer: string;
  readonly asset: string;
  readonly recipient: string;
  readonly amount: bigint;
}

export interface Settlement {
  readonly backend: 'ledger' | 'rpc';
  /** The chain, with the rpc backend. */
  readonly chain: ChainClient | undefined;
  /** Before the issuance transaction, never inside it (it may read the chain): the buyer's balance is known. */
  prepare(buyer: string, asset: string): Promise<void>;
  /** Inside the issuance transaction; throws InsufficientFunds when the buyer's funds do not cover the legs. */
  backPaymentIn(tx: SqlTx, legs: PaymentLegs, now: Date): Promise<void>;
  /** A reserved fee leg decided paid, inside the caller's transaction (ledger: it moves; rpc: the collector's). */
  settleFeeIn(tx: SqlTx, fee: FeeLeg, now: Date): Promise<void>;
}

function ledgerSettlement(): Settlement {
  return {
    backend: 'ledger',
    chain: undefined,
    prepare: async () => {},
    async backPaymentIn(tx, p, now) {
      const movements: Movement[] = [
        {
          from: p.buyer,
          to: p.merchant.recipient,
          asset: p.asset,
          amount: p.merchant.amount,
          kind: 'router',
          reference: p.paymentId,
        },
      ];
      if (p.fee?.now === true && p.fee.amount > 0n)
        movements.push({
          from: p.buyer,
          to: p.fee.recipient,
          asset: p.asset,
          amount: p.fee.amount,
          kind: 'router_fee',
          reference: p.paymentId,
        });
      await applyMovements(tx, movements, now);
    },
    async settleFeeIn(tx, f, now) {
      await applyMovements(
        tx,
        [
          {
            from: f.buyer,
            to: f.recipient,
            asset: f.asset,
            amount: f.amount,
            kind: 'router_fee',
            reference: f.paymentId,
          },
        ],
        now,
      );
    },
  };
}

function rpcSettlement(chain: ChainClient, reads: BalanceReads): Settlement {
  return {
    backend: 'rpc',
    chain,
    prepare: (buyer, asset) => reads.ensureFresh(getAddress(buyer), getAddress(asset)),
    async backPaymentIn(tx, p, now) {
      const base = { address: getAddress(p.buyer), asset: getAddress(p.asset), reference: p.paymentId };
      const legs: NewReservation[] = [
        {
          ...base,
          id: p.paymentId,
          kind: 'router',
          amount: p.merchant.amount,
          authNonce: p.authorization.nonce.toLowerCase(),
          validBefore: p.authorization.validBefore,
        },
      ];
      // Reserved with the merchant leg whether decided now or later: the funds must be there for both.
      if (p.fee !== undefined && p.fee.amount > 0n)
        legs.push({
          ...base,
          id: feeReservationId(p.paymentId),
          kind: 'router_fee',
          amount: p.fee.amount,
          authNonce: null,
          validBefore: null,
        });
      await reserveIn(tx, legs, now);
    },
    // The fee leg stays reserved: the operator collects it on chain (chain/fee-collector.ts) once the merchant leg is
    // seen settled. Its `fee_status = 'settled'` is the decision, written by the caller.
    settleFeeIn: async () => {},
  };
}

const settlements = new WeakMap<ServiceContext, Settlement>();

/** The process's one backend for this context (its balance reads are paced per process: balance-reads.ts). */
export function settlementOf(ctx: ServiceContext): Settlement {
  let s = settlements.get(ctx);
  if (s === undefined) {
    s = createSettlement(ctx);
    settlements.set(ctx, s);
  }
  return s;
}

/** The backend the configuration names; rpc builds its chain client (nothing connects until the first read). */
export function createSettlement(ctx: ServiceContext): Settlement {
  const s = ctx.config.settlement;
  if (s.backend === 'ledger') return ledgerSettlement();
  const chain = chainClientOf(ctx.config, s.rpcUrl);
  return rpcSettlement(chain, createBalanceReads(ctx, chain));
}

export function chainClientOf(config: Config, rpcUrl: string): ChainClient {
  return createChainClient({
    chainId: NETWORKS[config.ENVIRONMENT].chainId,
    rpcUrl,
    timeoutMs: config.CHAIN_RPC_TIMEOUT_MS,
  });
}
