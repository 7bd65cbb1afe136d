// Every statement on oauth_page_session (the pages' signed-in sessions, stored as the SHA-256 of the cookie token),
// all through the entity manager: a use both checks and extends its session by ONE conditional UPDATE whose
// affected-row count decides, so the purge deletes through it too.
import { OAuthPageSession } from '../../db/entities/index.js';
import type { Em } from '../../db/sql.js';
import { deleteBatch } from './purge-batch.js';

export async function insertPageSession(
  em: Em,
  row: { sessionHash: string; userId: string; lastSeenAt: Date; expiresAt: Date; createdAt: Date },
): Promise<void> {
  em.create(OAuthPageSession, row);
  await em.flush();
}

/**
 * Extends the session to `now` if it was seen after `idleSince` and has not ended at `now`: 1 when it is still a
 * session (and is now extended), else 0.
 */
export const touchPageSession = (em: Em, sessionHash: string, idleSince: Date, now: Date): Promise<number> =>
  em.nativeUpdate(
    OAuthPageSession,
    { sessionHash, lastSeenAt: { $gt: idleSince }, expiresAt: { $gt: now } },
    { lastSeenAt: now },
  );

/** The user signed in by the session, whatever its state (callers touch it first). */
export const pageSessionUser = async (em: Em, sessionHash: string): Promise<string | undefined> =>
  (await em.findOne(OAuthPageSession, { sessionHash }))?.userId;

export async function deletePageSession(em: Em, sessionHash: string): Promise<void> {
  await em.nativeDelete(OAuthPageSession, { sessionHash });
}

/**
 * Deletes up to `limit` sessions that ended before `now` or were last seen before `idleSince`, in one statement;
 * how many it deleted.
 */
export const purgePageSessions = (em: Em, now: Date, idleSince: Date, limit: number): Promise<number> =>
  deleteBatch(
    em,
    OAuthPageSession,
    'sessionHash',
    { $or: [{ expiresAt: { $lt: now } }, { lastSeenAt: { $lt: idleSince } }] },
    limit,
  );
