// API keys as credentials: `<environment>:<random>`, the whole string is the bearer token, stored as SHA-256.
import { LRUCache } from 'lru-cache';
import type { ServiceContext } from '../context.js';
import { secretsEqual, sha256Hex } from '../crypto/hashing.js';
import { apiKeyByHash, userById } from '../accounts/store.js';
import { AppError } from '../errors/app-error.js';
import { cacheLookup } from '../metrics/caches.js';
import type { ApiKeyCaller } from './caller.js';

export interface ApiKeyCredential {
  /** True when `token` has the form of an API key of any environment (the resolver's branch test). */
  matches(token: string): boolean;
  /** The caller holding `token`, or 401 BCK.AUTH.0001. */
  verify(token: string): Promise<ApiKeyCaller>;
}

// `<environment>:`: a JWT (the other bearer form a later credential kind uses) has no colon.
const API_KEY_FORM = /^[a-z]+:/;

/**
 * Caches hash -> caller for at most API_KEY_CACHE_MS (<= 1 s), so a revocation is effective within a second in
 * every process while the hot path skips the database.
 */
export function createApiKeyCredential(ctx: ServiceContext): ApiKeyCredential {
  const ttl = ctx.config.API_KEY_CACHE_MS;
  const cache = ttl > 0 ? new LRUCache<string, ApiKeyCaller>({ max: 10_000, ttl }) : undefined;
  const prefix = `${ctx.config.ENVIRONMENT}:`;
  const refuse = (why: string): never => {
    throw new AppError('BCK.AUTH.0001', { details: why });
  };
  return {
    matches: (token) => API_KEY_FORM.test(token),
    async verify(key) {
      // A key of the other environment is refused without a lookup.
      if (!key.startsWith(prefix)) return refuse('API key is not valid for this environment');
      const hash = sha256Hex(key);
      const hit = cacheLookup('api_key', cache?.get(hash));
      if (hit !== undefined) return hit;
      const em = ctx.db.em();
      const row = await apiKeyByHash(em, hash);
      if (row === null || row.revokedAt !== null || row.environment !== ctx.config.ENVIRONMENT) {
        return refuse('unknown or revoked API key');
      }
      // The lookup was by hash; compare again in constant time so no code path depends on a plain equality.
      if (!secretsEqual(row.keyHash, hash)) return refuse('unknown or revoked API key');
      const user = await userById(em, row.userId);
      if (user === null) return refuse('unknown or revoked API key');
      const caller: ApiKeyCaller = {
        kind: 'apiKey',
        userId: user.id,
        apiKeyId: row.id,
        email: user.email,
        walletAddress: user.walletAddress,
      };
      cache?.set(hash, caller);
      return caller;
    },
  };
}
