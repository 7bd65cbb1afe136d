// API keys (DESIGN §3): `<environment>:<random>`, the whole string is the bearer token, stored as SHA-256.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config/index.js';
import type { ServiceContext } from '../context.js';
import { randomToken, secretsEqual, sha256Hex } from '../crypto/hashing.js';
import { ApiKey, User } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';

export interface Principal {
  readonly userId: string;
  readonly apiKeyId: string;
  readonly email: string;
  readonly walletAddress: string;
}

export async function createApiKey(
  ctx: ServiceContext,
  userId: string,
): Promise<{ apiKeyId: string; apiKey: string; userId: string; environment: Config['ENVIRONMENT'] }> {
  const em = ctx.db.em();
  const user = await em.findOne(User, { id: userId });
  if (user === null) throw new AppError('BCK.HTTP.0400', `unknown user ${userId}`);
  const environment = ctx.config.ENVIRONMENT;
  const apiKey = `${environment}:${randomToken(32)}`;
  const apiKeyId = randomUUID();
  em.create(ApiKey, {
    id: apiKeyId,
    userId,
    keyHash: sha256Hex(apiKey),
    keyPrefix: apiKey.slice(0, environment.length + 7),
    environment,
    revokedAt: null,
  });
  await em.flush();
  return { apiKeyId, apiKey, userId, environment };
}

export async function revokeApiKey(
  ctx: ServiceContext,
  apiKeyId: string,
): Promise<{ apiKeyId: string; revoked: boolean }> {
  const n = await ctx.db.em().nativeUpdate(ApiKey, { id: apiKeyId, revokedAt: null }, { revokedAt: ctx.now() });
  if (n === 0) {
    const exists = await ctx.db.em().count(ApiKey, { id: apiKeyId });
    if (exists === 0) throw new AppError('BCK.HTTP.0400', `unknown API key ${apiKeyId}`);
  }
  return { apiKeyId, revoked: true };
}

export interface Authenticator {
  /** Resolves `Authorization` header to a principal, or throws 401 BCK.AUTH.0001. */
  authenticate(authorization: string | undefined): Promise<Principal>;
}

/**
 * Caches hash -> principal for at most API_KEY_CACHE_MS (<= 1 s), so a revocation is effective within a second
 * in every process while the hot path skips the database.
 */
export function createAuthenticator(ctx: ServiceContext): Authenticator {
  const ttl = ctx.config.API_KEY_CACHE_MS;
  const cache = ttl > 0 ? new LRUCache<string, Principal>({ max: 10_000, ttl }) : undefined;
  const prefix = `${ctx.config.ENVIRONMENT}:`;
  const refuse = (why: string): never => {
    throw new AppError('BCK.AUTH.0001', why);
  };
  return {
    async authenticate(authorization) {
      if (authorization === undefined || authorization === '') return refuse('missing Authorization header');
      const m = /^Bearer[ ]+(\S{1,512})[ ]*$/i.exec(authorization);
      const key = m?.[1];
      if (key === undefined) return refuse('Authorization must be "Bearer <API key>"');
      // A key of the other environment is refused without a lookup.
      if (!key.startsWith(prefix)) return refuse('API key is not valid for this environment');
      const hash = sha256Hex(key);
      const hit = cache?.get(hash);
      if (hit !== undefined) return hit;
      const em = ctx.db.em();
      const row = await em.findOne(ApiKey, { keyHash: hash });
      if (row === null || row.revokedAt !== null || row.environment !== ctx.config.ENVIRONMENT) {
        return refuse('unknown or revoked API key');
      }
      // The lookup was by hash; compare again in constant time so no code path depends on a plain equality.
      if (!secretsEqual(row.keyHash, hash)) return refuse('unknown or revoked API key');
      const user = await em.findOne(User, { id: row.userId });
      if (user === null) return refuse('unknown or revoked API key');
      const principal: Principal = {
        userId: user.id,
        apiKeyId: row.id,
        email: user.email,
        walletAddress: user.walletAddress,
      };
      cache?.set(hash, principal);
      return principal;
    },
  };
}
