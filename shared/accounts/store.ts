// The statements on the accounts tables (user, api_key, service_wallet), all through the entity manager. Services
// and the credential resolvers call these; the rows' rules (hashing, sealing, who may see what) stay with them.
import { ApiKey, ServiceWallet, User } from '../db/entities/index.js';
import type { Em } from '../db/orm.js';

export const userById = (em: Em, id: string) => em.findOne(User, { id });

export const userByIdOrFail = (em: Em, id: string) => em.findOneOrFail(User, { id });

/** A unique violation (email, wallet) propagates as MikroORM's UniqueConstraintViolationException. */
export async function insertUser(
  em: Em,
  row: { id: string; email: string; walletAddress: string; walletKeyEnc: string },
): Promise<void> {
  em.create(User, row);
  await em.flush();
}

export const countUsersWithWallet = (em: Em, walletAddress: string): Promise<number> =>
  em.count(User, { walletAddress });

/** The sealed custodial key of the user whose wallet this is, if any. */
export const userWalletKeyOf = (em: Em, walletAddress: string) =>
  em.findOne(User, { walletAddress }, { fields: ['walletKeyEnc'] });

export const apiKeyByHash = (em: Em, keyHash: string) => em.findOne(ApiKey, { keyHash });

/** The user's key `id` if it is not revoked. */
export const activeApiKeyOf = (em: Em, userId: string, id: string) =>
  em.findOne(ApiKey, { id, userId, revokedAt: null });

export async function insertApiKey(
  em: Em,
  row: { id: string; userId: string; keyHash: string; keyPrefix: string; environment: string; revokedAt: null },
): Promise<void> {
  em.create(ApiKey, row);
  await em.flush();
}

/** Revokes a key not revoked yet; the number of rows changed (0: revoked before, or no such key). */
export const revokeApiKeyRow = (em: Em, id: string, now: Date): Promise<number> =>
  em.nativeUpdate(ApiKey, { id, revokedAt: null }, { revokedAt: now });

export const countApiKeys = (em: Em, id: string): Promise<number> => em.count(ApiKey, { id });

export const operatorWallet = (em: Em) => em.findOne(ServiceWallet, { name: 'operator' });

export const operatorWalletOrFail = (em: Em) => em.findOneOrFail(ServiceWallet, { name: 'operator' });

/** Inserts the operator wallet unless a concurrent first start inserted it first (then nothing changes). */
export async function insertOperatorWalletIfAbsent(
  em: Em,
  row: { address: string; keyEnc: string; createdAt: Date },
): Promise<void> {
  await em
    .createQueryBuilder(ServiceWallet)
    .insert({ name: 'operator', ...row })
    .onConflict('name')
    .ignore()
    .execute();
}
