// Every statement on oauth_code (authorization codes, stored as the SHA-256 of the code), all through the entity
// manager: a code is consumed by ONE conditional UPDATE whose affected-row count decides, in the entity manager's
// transaction that stores the new refresh token, so the purge deletes through it too.
import type { InferEntity } from '@mikro-orm/core';
import { OAuthCode } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';
import { deleteBatch } from './purge-batch.js';

export type CodeRow = InferEntity<typeof OAuthCode>;

/** Adds a new, unconsumed code to `em`'s unit of work; the caller flushes it with its grant. */
export function addCode(em: Em, row: Omit<CodeRow, 'consumedAt'>): void {
  em.create(OAuthCode, { ...row, consumedAt: null });
}

export const findCode = (em: Em, codeHash: string): Promise<CodeRow | null> => em.findOne(OAuthCode, { codeHash });

/** Consumes the code if it is neither consumed nor expired at `now`: 1 for the one redemption that wins, else 0. */
export const consumeCode = (em: Em, codeHash: string, now: Date): Promise<number> =>
  em.nativeUpdate(OAuthCode, { codeHash, consumedAt: null, expiresAt: { $gt: now } }, { consumedAt: now });

/** Deletes up to `limit` codes that expired before `before`, in one statement; how many it deleted. */
export const purgeCodes = (em: Em, before: Date, limit: number): Promise<number> =>
  deleteBatch(em, OAuthCode, 'codeHash', { expiresAt: { $lt: before } }, limit);
