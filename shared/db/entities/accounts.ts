import { defineEntity, p } from '@mikro-orm/core';

/** A user: an email and a custodial buyer wallet whose key is stored encrypted. */
export const User = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.string().primary(),
    email: p.string().unique(),
    walletAddress: p.string().unique(),
    walletKeyEnc: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** API keys are stored as SHA-256 hashes; the plain key is shown once, at creation. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.string().primary(),
    userId: p.string().index(),
    keyHash: p.string().unique(),
    /** First characters of the key, for operators to tell keys apart; not a secret. */
    keyPrefix: p.string(),
    environment: p.string(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** The service's ES256 signing keys (jose), private half encrypted. Published in the JWKS. */
export const SigningKey = defineEntity({
  name: 'SigningKey',
  tableName: 'signing_key',
  properties: {
    kid: p.string().primary(),
    publicJwk: p.text(),
    privateKeyEnc: p.text(),
    /** Signs from this instant on; published before that (key rotation: verifiers must already know a key when it starts signing). */
    activatesAt: p.datetime(),
    /** Stops signing; stays published until tokens it signed have expired. */
    retiresAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

/** Wallets of the service itself (the operator wallet, the default fee recipient). */
export const ServiceWallet = defineEntity({
  name: 'ServiceWallet',
  tableName: 'service_wallet',
  properties: {
    name: p.string().primary(),
    address: p.string(),
    keyEnc: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
