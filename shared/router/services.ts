// The payment router's services and caches, built once per proxy process and handed to every router call.
import type { ServiceContext } from '../context.js';
import type { DigestSigner } from '../protocols/digest-signer.js';
import type { Settlement } from '../settlement/backend.js';
import type { Upstream } from '../upstream/index.js';
import type { RequestClaimStore } from './request-claim-store.js';
import type { ConcurrencyLimiter } from './concurrency.js';
import type { DelegationSnapshots } from './delegation-snapshot.js';
import type { WalletKeyCache } from './wallet-keys.js';

export interface RouterServices {
  readonly ctx: ServiceContext;
  readonly requestClaims: RequestClaimStore;
  readonly limiter: ConcurrencyLimiter;
  /**
   * Duplicates of a requestId waiting for the first call's paymentId without holding a slot (request-claims.ts), per
   * user, at most ROUTER_MAX_CONCURRENT_PER_USER: past it a duplicate waits holding its slot, so waiters (and the
   * bodies they keep) stay bounded.
   */
  readonly waiting: ConcurrencyLimiter;
  readonly upstream: Upstream;
  /** ROUTER_FEE_RECIPIENT, or the operator wallet. */
  readonly feeRecipient: string;
  /** Decrypted custodial keys, briefly cached (wallet-keys.ts). */
  readonly walletKeys: WalletKeyCache;
  /** Where signatures are made: worker threads (ROUTER_SIGNING_THREADS) or inline. */
  readonly signer: DigestSigner;
  /** Delegations read at most a second ago, for early refusal (delegation-snapshot.ts). */
  readonly delegations: DelegationSnapshots;
  /** What backs a payment: the internal token ledger, or the chain (SETTLEMENT_BACKEND). */
  readonly settlement: Settlement;
}
