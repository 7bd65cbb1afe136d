import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { AppError } from '../errors/app-error.js';
import { createApiKey } from './api-keys.js';
import { countUsersWithWallet, insertUser, userByIdOrFail } from './store.js';

export const Email = z
  .email()
  .max(320)
  .transform((e) => e.toLowerCase());

export interface CreatedUser {
  userId: string;
  email: string;
  walletAddress: string;
  apiKeyId: string;
  apiKey: string;
}

/** Creates a user with a custodial wallet (key sealed with AES-256-GCM) and a first API key. */
export async function createUser(ctx: ServiceContext, emailInput: string): Promise<CreatedUser> {
  const parsed = Email.safeParse(emailInput);
  if (!parsed.success) throw new AppError('BCK.HTTP.0400', { details: 'email must be a valid address' });
  const email = parsed.data;
  const privateKey = generatePrivateKey();
  const walletAddress = privateKeyToAccount(privateKey).address;
  const userId = randomUUID();
  try {
    await insertUser(ctx.db.em(), { id: userId, email, walletAddress, walletKeyEnc: ctx.box.seal(privateKey) });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw new AppError('BCK.HTTP.0400', { details: `a user with email ${email} exists` });
    }
    throw err;
  }
  const key = await createApiKey(ctx, userId);
  return { userId, email, walletAddress, apiKeyId: key.apiKeyId, apiKey: key.apiKey };
}

/** Loads the custodial wallet key of a user (for signing; never logged, never returned). */
export async function walletKeyOf(ctx: ServiceContext, userId: string): Promise<`0x${string}`> {
  const user = await userByIdOrFail(ctx.db.em(), userId);
  return ctx.box.open(user.walletKeyEnc) as `0x${string}`;
}

export async function isAccountAddress(ctx: ServiceContext, address: string): Promise<boolean> {
  return (await countUsersWithWallet(ctx.db.em(), address)) > 0;
}
