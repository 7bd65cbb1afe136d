// API key management: `<environment>:<random>`, the whole string is the bearer token, stored only as SHA-256 (a
// leaked database holds no usable key). Keys are verified as credentials by shared/auth/api-key-credential.ts.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/index.js';
import type { ServiceContext } from '../context.js';
import { randomToken, sha256Hex } from '../crypto/hashing.js';
import { AppError } from '../errors/app-error.js';
import { countApiKeys, insertApiKey, revokeApiKeyRow, userById } from './store.js';

export async function createApiKey(
  ctx: ServiceContext,
  userId: string,
): Promise<{ apiKeyId: string; apiKey: string; userId: string; environment: Config['ENVIRONMENT'] }> {
  const em = ctx.db.em();
  const user = await userById(em, userId);
  if (user === null) throw new AppError('BCK.HTTP.0400', { details: `unknown user ${userId}` });
  const environment = ctx.config.ENVIRONMENT;
  const apiKey = `${environment}:${randomToken(32)}`;
  const apiKeyId = randomUUID();
  await insertApiKey(em, {
    id: apiKeyId,
    userId,
    keyHash: sha256Hex(apiKey),
    keyPrefix: apiKey.slice(0, environment.length + 7),
    environment,
    revokedAt: null,
  });
  return { apiKeyId, apiKey, userId, environment };
}

export async function revokeApiKey(
  ctx: ServiceContext,
  apiKeyId: string,
): Promise<{ apiKeyId: string; revoked: boolean }> {
  const n = await revokeApiKeyRow(ctx.db.em(), apiKeyId, ctx.now());
  if (n === 0) {
    const exists = await countApiKeys(ctx.db.em(), apiKeyId);
    if (exists === 0) throw new AppError('BCK.HTTP.0400', { details: `unknown API key ${apiKeyId}` });
  }
  return { apiKeyId, revoked: true };
}
