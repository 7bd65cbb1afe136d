/** The authenticated caller as the credit services need it (a subset of the API-key principal). */
export interface Caller {
  readonly userId: string;
  /** The caller's custodial buyer wallet: it pays orders and holds the credits it buys. */
  readonly walletAddress: string;
}
