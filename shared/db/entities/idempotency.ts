import { defineEntity, p } from '@mikro-orm/core';

export const IDEMPOTENCY_STATES = ['running', 'done'] as const;

/**
 * One Idempotency-Key of a money-moving admin POST (shared/idempotency/store.ts). The unique (user, scope, key)
 * row is the claim: whichever request inserts it runs the handler, in any process, and every other request with
 * that key reads it. The key is kept only as SHA-256 of (user, key); the stored answer is sealed (it can hold
 * access tokens). Rows live until `expiresAt`, then the admin process purges them.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_key',
  uniques: [{ properties: ['userId', 'scope', 'keyHash'] }],
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    id: p.string().primary(),
    userId: p.string(),
    /** Method and route pattern, e.g. `POST /api/v1/protocol/plans/:planId/order`. */
    scope: p.string(),
    /** SHA-256 (hex) of the user id and the key as sent. */
    keyHash: p.string(),
    /** SHA-256 (hex) of the request: method, route pattern, path parameters, canonical body (fingerprint.ts). */
    fingerprint: p.string(),
    /** running (claimed, handler not finished) | done (answer stored). */
    state: p.enum(IDEMPOTENCY_STATES),
    responseStatus: p.integer().nullable(),
    /** The answer's headers and body, sealed with the secret box (AES-256-GCM). */
    response: p.text().nullable(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
  },
});
