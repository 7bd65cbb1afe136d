// Every statement on oauth_refresh_token (stored as the SHA-256 of the token), all through the entity manager: a
// use rotates the token by ONE conditional UPDATE whose affected-row count decides, in the entity manager's
// transaction that stores its successor, so the revocation and the purge go through it too.
import type { InferEntity } from '@mikro-orm/core';
import { OAuthRefreshToken } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';
import { deleteBatch } from './purge-batch.js';

export type RefreshTokenRow = InferEntity<typeof OAuthRefreshToken>;

/** Adds a new refresh token to `em`'s unit of work; the caller flushes it in the redemption's transaction. */
export function addRefreshToken(em: Em, row: Omit<RefreshTokenRow, 'rotatedAt' | 'revokedAt'>): void {
  em.create(OAuthRefreshToken, { ...row, rotatedAt: null, revokedAt: null });
}

export const findRefreshToken = (em: Em, tokenHash: string): Promise<RefreshTokenRow | null> =>
  em.findOne(OAuthRefreshToken, { tokenHash });

/** Rotates the token if it is neither rotated nor revoked: 1 for the one use that wins, else 0. */
export const rotateRefreshToken = (em: Em, tokenHash: string, now: Date): Promise<number> =>
  em.nativeUpdate(OAuthRefreshToken, { tokenHash, rotatedAt: null, revokedAt: null }, { rotatedAt: now });

/** Revokes every refresh token of the grants not revoked yet (one revoked earlier keeps its time). */
export async function revokeRefreshTokensOf(em: Em, grantIds: readonly string[], now: Date): Promise<void> {
  await em.nativeUpdate(OAuthRefreshToken, { grantId: { $in: [...grantIds] }, revokedAt: null }, { revokedAt: now });
}

/** Deletes up to `limit` refresh tokens that expired before `before`, in one statement; how many it deleted. */
export const purgeRefreshTokens = (em: Em, before: Date, limit: number): Promise<number> =>
  deleteBatch(em, OAuthRefreshToken, 'tokenHash', { expiresAt: { $lt: before } }, limit);
