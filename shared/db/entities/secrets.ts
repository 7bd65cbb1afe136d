import { defineEntity, p } from '@mikro-orm/core';

/**
 * The check value of the key every sealed column is under (shared/secrets/key-check.ts): one row, `id` 'current'.
 * A process whose SECRETS_KEY gives another value is refused at start; `secrets rotate` changes it last, in the
 * transaction that reseals the data.
 */
export const SecretsKeyCheck = defineEntity({
  name: 'SecretsKeyCheck',
  tableName: 'secrets_key_check',
  properties: {
    id: p.string().primary(),
    /** `v1.` and an HMAC-SHA256 under a key derived from SECRETS_KEY (shared/crypto/secrets.ts): never the key. */
    keyCheck: p.string(),
    updatedAt: p.datetime(),
  },
});
