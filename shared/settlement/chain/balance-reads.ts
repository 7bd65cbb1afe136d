// On-chain balance reads for the rpc backend, at most one per (wallet, token) per CHAIN_BALANCE_TTL_MS in this
// process, and one at a time (callers arriving meanwhile share it). Only the pacing lives in memory: what a read
// says is recorded in the database (reservations.ts recordBalanceReadIn), where every process's payments meet.
import type { Address } from 'viem';
import type { ServiceContext } from '../../context.js';
import type { ChainClient } from './client.js';
import { recordBalanceReadIn } from './reservations.js';

export interface BalanceReads {
  /** Reads the balance on chain and records it, unless this process did within the TTL. */
  ensureFresh(address: Address, asset: Address): Promise<void>;
  /** Reads and records now, whatever the TTL (the CLI's balance, a test). */
  refresh(address: Address, asset: Address): Promise<{ balance: bigint; block: bigint }>;
}

export function createBalanceReads(ctx: ServiceContext, chain: ChainClient): BalanceReads {
  const readAt = new Map<string, number>();
  const inFlight = new Map<string, Promise<{ balance: bigint; block: bigint }>>();
  const refresh = (address: Address, asset: Address) => {
    const key = `${address}|${asset}`;
    const running = inFlight.get(key);
    if (running !== undefined) return running;
    const started = Date.now();
    const read = (async () => {
      const { number: block } = await chain.latestBlock();
      const balance = await chain.balanceOf(asset, address, block);
      await ctx.db.sql.transaction((tx) => recordBalanceReadIn(tx, { address, asset, balance, block }, ctx.now()), {
        serializeOn: address,
      });
      // Bounded: a wallet seen once stays a key; drop the oldest half past 100,000 wallets.
      if (readAt.size > 100_000) for (const k of [...readAt.keys()].slice(0, 50_000)) readAt.delete(k);
      readAt.set(key, started);
      return { balance, block };
    })().finally(() => inFlight.delete(key));
    inFlight.set(key, read);
    return read;
  };
  return {
    refresh,
    async ensureFresh(address, asset) {
      const at = readAt.get(`${address}|${asset}`);
      if (at !== undefined && Date.now() - at < ctx.config.CHAIN_BALANCE_TTL_MS) return;
      await refresh(address, asset);
    },
  };
}
