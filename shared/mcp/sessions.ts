// MCP sessions (Streamable HTTP, `Mcp-Session-Id`): the id the initialize answer hands out is random; the database
// holds its SHA-256 and the grant whose token opened it. Nothing of a session lives only in a process, so every
// proxy process serves every session and a restarted one loses none. A session of another grant is unknown (404),
// as an ended one is, and so is every session of a grant no longer active: each request's session is read from the
// database (never a process's cache) together with its grant's status, so ending a session or revoking its grant
// stops the very next request in every process, whatever a process still remembers of the token.
import type { ServiceContext } from '../context.js';
import { randomToken, sha256Hex } from '../crypto/hashing.js';
import { McpSession, OAuthGrant } from '../db/entities/index.js';
import { emSql } from '../db/sql.js';
import { deleteBatch } from '../oauth/store/purge-batch.js';

export type SessionState = 'live' | 'revoked' | 'unknown';

export interface McpSessions {
  /** A new session of the grant: its id (shown once, in the initialize answer's Mcp-Session-Id). */
  open(grantId: string, protocolVersion: string): Promise<string>;
  /** `live`: a session of the grant that has not ended, the grant still active; `revoked`: the grant is not;
   *  `unknown`: no such session of the grant, or it ended. */
  stateOf(id: string, grantId: string): Promise<SessionState>;
  /** Ends the grant's session `id`; false when there was no such live session. */
  end(id: string, grantId: string): Promise<boolean>;
}

// The transport's rule for a session id (visible ASCII); ours are 43 base64url characters.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export function createMcpSessions(ctx: ServiceContext): McpSessions {
  return {
    async open(grantId, protocolVersion) {
      const id = randomToken(32);
      const em = ctx.db.em();
      em.create(McpSession, {
        sessionHash: sha256Hex(id),
        grantId,
        protocolVersion,
        endedAt: null,
        createdAt: ctx.now(),
      });
      await em.flush();
      return id;
    },
    async stateOf(id, grantId) {
      if (!SESSION_ID.test(id)) return 'unknown';
      const [row] = await emSql(ctx.db.em()).all(
        `select g.status as status from mcp_session s join oauth_grant g on g.id = s.grant_id
          where s.session_hash = ? and s.grant_id = ? and s.ended_at is null`,
        [sha256Hex(id), grantId],
      );
      if (row === undefined) return 'unknown';
      return row.status === 'Active' ? 'live' : 'revoked';
    },
    async end(id, grantId) {
      if (!SESSION_ID.test(id)) return false;
      const ended = await ctx.db
        .em()
        .nativeUpdate(McpSession, { sessionHash: sha256Hex(id), grantId, endedAt: null }, { endedAt: ctx.now() });
      return ended === 1;
    },
  };
}

const DAY_MS = 86_400_000;
/** Rows deleted per statement: bounds how long one purge holds the write lock. */
const BATCH = 500;

/**
 * Deletes the sessions that ended, or whose grant was revoked, more than a day before `now` (a session of a revoked
 * grant can never serve a request again: its tokens are refused), in batches; how many it deleted. The admin
 * process runs it with the OAuth purge (admin/jobs/oauth-purge.ts).
 */
export async function purgeMcpSessions(ctx: ServiceContext, now: Date, maxBatches = 100): Promise<number> {
  const before = new Date(now.getTime() - DAY_MS);
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const em = ctx.db.em();
    const revoked = em
      .createQueryBuilder(OAuthGrant)
      .select('id')
      .where({ status: 'Revoked', revokedAt: { $lt: before } });
    const where = { $or: [{ endedAt: { $lt: before } }, { grantId: { $in: revoked } }] };
    const n = await deleteBatch(em, McpSession, 'sessionHash', where, BATCH);
    total += n;
    if (n < BATCH) break;
  }
  return total;
}
