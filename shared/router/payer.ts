// Whose wallet pays a router payment: the user's own custodial wallet, or the organization wallet the delegation
// names (shared with one of the user's groups), whose spends are charged to that group's budget as well.
import type { RouterPrincipal } from './principal.js';
import type { DelegationRow } from './delegation-snapshot.js';
import type { RouterServices } from './services.js';
import { InvariantError } from '../errors/invariant.js';

export interface Payer {
  /** The wallet that signs and whose balance moves. */
  readonly address: string;
  key(): Promise<`0x${string}`>;
  /**
   * Set when an organization wallet pays: the group whose budget is charged, and the member who spends, whose own
   * wallet it never pays (that would move the organization's money to the member: a budget bounds what a group
   * buys, not what its members may take).
   */
  readonly organization?: {
    readonly walletId: string;
    readonly groupId: string;
    readonly userId: string;
    readonly memberWallet: string;
  };
}

export async function payerOf(
  services: RouterServices,
  principal: RouterPrincipal,
  delegation: DelegationRow,
): Promise<Payer> {
  if (delegation.orgWalletId == null) {
    return { address: principal.walletAddress, key: () => services.walletKeys.get(principal.userId) };
  }
  // Creation always names the group; a row without one must never fall back to the member's own wallet.
  if (delegation.groupId == null) throw new InvariantError(`delegation ${delegation.id} names a wallet but no group`);
  const wallet = await services.walletKeys.orgWallet(delegation.orgWalletId);
  return {
    address: wallet.address,
    key: async () => wallet.key,
    organization: {
      walletId: delegation.orgWalletId,
      groupId: delegation.groupId,
      userId: principal.userId,
      memberWallet: principal.walletAddress,
    },
  };
}
