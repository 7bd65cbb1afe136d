// Every column holding a value sealed with the secret box (shared/crypto/secrets.ts). The key check at start probes
// them and `secrets rotate` reseals them: a sealed column missing here would stay under the old key after a rotation
// and answer 500 from then on (test/accounts/secrets-rotate.test.ts scans every column of every table for sealed values).
// API keys, OAuth secrets and x402 signatures are not here: they are stored hashed, not sealed, and need no key.

export interface SealedColumn {
  readonly table: string;
  /** The table's one-column primary key: a rotation walks the rows in its order. */
  readonly key: string;
  readonly column: string;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  // Users' custodial wallet keys (shared/accounts/users.ts): every payment a user signs.
  { table: 'app_user', key: 'id', column: 'wallet_key_enc' },
  // Organization wallets (shared/organizations/wallets.ts).
  { table: 'org_wallet', key: 'id', column: 'wallet_key_enc' },
  // The service's ES256 private keys (shared/keys/signing-keys.ts): the JWKS, plan and OAuth tokens.
  { table: 'signing_key', key: 'kid', column: 'private_key_enc' },
  // The operator wallet (shared/accounts/service-wallets.ts).
  { table: 'service_wallet', key: 'name', column: 'key_enc' },
  // Stored answers of idempotent POSTs (shared/idempotency/store.ts): they can hold access tokens.
  { table: 'idempotency_key', key: 'id', column: 'response' },
];
