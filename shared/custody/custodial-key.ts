// The key of a custodial wallet payroute signs for, by its address: a user's own wallet or an organization wallet.
import type { ServiceContext } from '../context.js';
import { userWalletKeyOf } from '../accounts/store.js';
import { InvariantError } from '../errors/invariant.js';
import { walletKeyAt } from '../organizations/store/wallets.js';

export async function custodialKeyOf(ctx: ServiceContext, address: string): Promise<`0x${string}`> {
  const em = ctx.db.em();
  const user = await userWalletKeyOf(em, address);
  if (user !== null) return ctx.box.open(user.walletKeyEnc) as `0x${string}`;
  const org = await walletKeyAt(em, address);
  if (org !== null) return ctx.box.open(org.walletKeyEnc) as `0x${string}`;
  throw new InvariantError(`no custodial wallet has the address ${address}`);
}
