// A short-lived cache of decrypted custodial keys for the signing hot path: it saves a database read and an
// AES-GCM open per payment. It adds no new exposure: the process holds SECRETS_KEY, which opens every stored key
// anyway. Bounded in size and time, so a key leaves memory within a minute of its last use.
import { LRUCache } from 'lru-cache';
import { privateKeyToAccount } from 'viem/accounts';
import { walletKeyOf } from '../accounts/users.js';
import { orgWalletKeyOf } from '../organizations/wallets.js';
import type { ServiceContext } from '../context.js';
import { cacheLookup } from '../metrics/caches.js';

export interface WalletKeyCache {
  get(userId: string): Promise<`0x${string}`>;
  /** An organization wallet's address and key (a delegation naming it pays from it). */
  orgWallet(walletId: string): Promise<{ address: string; key: `0x${string}` }>;
  /** Keys held now (expired ones are gone: see ttlAutopurge). */
  size(): number;
}

export function createWalletKeyCache(ctx: ServiceContext, opts: { max?: number; ttlMs?: number } = {}): WalletKeyCache {
  // ttlAutopurge: without it lru-cache drops an expired entry only when it is next looked up or pushed out, so a
  // key could stay in memory long after its minute.
  const cache = new LRUCache<string, `0x${string}`>({
    max: opts.max ?? 10_000,
    ttl: opts.ttlMs ?? 60_000,
    ttlAutopurge: true,
  });
  const orgWallets = new LRUCache<string, { address: string; key: `0x${string}` }>({
    max: opts.max ?? 10_000,
    ttl: opts.ttlMs ?? 60_000,
    ttlAutopurge: true,
  });
  return {
    async orgWallet(walletId) {
      const hit = cacheLookup('org_wallet_key', orgWallets.get(walletId));
      if (hit !== undefined) return hit;
      const key = await orgWalletKeyOf(ctx, walletId);
      const wallet = { address: privateKeyToAccount(key).address, key };
      orgWallets.set(walletId, wallet);
      return wallet;
    },
    async get(userId) {
      const hit = cacheLookup('wallet_key', cache.get(userId));
      if (hit !== undefined) return hit;
      const key = await walletKeyOf(ctx, userId);
      cache.set(userId, key);
      return key;
    },
    size: () => cache.size + orgWallets.size,
  };
}
