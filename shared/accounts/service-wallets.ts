import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ServiceContext } from '../context.js';
import { insertOperatorWalletIfAbsent, operatorWallet, operatorWalletOrFail } from './store.js';

/**
 * The operator wallet, created at first start; the default fee recipient of the router.
 * Concurrent first starts race on the primary key; the loser reads the winner's row.
 */
export async function ensureOperatorWallet(ctx: ServiceContext): Promise<string> {
  const em = ctx.db.em();
  const existing = await operatorWallet(em);
  if (existing !== null) return existing.address;
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await insertOperatorWalletIfAbsent(ctx.db.em(), { address, keyEnc: ctx.box.seal(key), createdAt: ctx.now() });
  const row = await operatorWalletOrFail(ctx.db.em());
  return row.address;
}

/** The operator wallet's key: it pays the gas of what payroute submits on chain (orders, fee legs). */
export async function operatorKeyOf(ctx: ServiceContext): Promise<`0x${string}`> {
  const row = await operatorWalletOrFail(ctx.db.em());
  return ctx.box.open(row.keyEnc) as `0x${string}`;
}
