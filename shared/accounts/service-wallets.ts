import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ServiceContext } from '../context.js';
import { ServiceWallet } from '../db/entities/index.js';

/**
 * The operator wallet, created at first start; the default fee recipient of the router.
 * Concurrent first starts race on the primary key; the loser reads the winner's row.
 */
export async function ensureOperatorWallet(ctx: ServiceContext): Promise<string> {
  const em = ctx.db.em();
  const existing = await em.findOne(ServiceWallet, { name: 'operator' });
  if (existing !== null) return existing.address;
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await ctx.db
    .em()
    .createQueryBuilder(ServiceWallet)
    .insert({ name: 'operator', address, keyEnc: ctx.box.seal(key), createdAt: ctx.now() })
    .onConflict('name')
    .ignore()
    .execute();
  const row = await ctx.db.em().findOneOrFail(ServiceWallet, { name: 'operator' });
  return row.address;
}

/** The operator wallet's key: it pays the gas of what payroute submits on chain (orders, fee legs). */
export async function operatorKeyOf(ctx: ServiceContext): Promise<`0x${string}`> {
  const row = await ctx.db.em().findOneOrFail(ServiceWallet, { name: 'operator' });
  return ctx.box.open(row.keyEnc) as `0x${string}`;
}
