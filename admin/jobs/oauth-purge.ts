// What the OAuth flows leave behind, every 10 minutes, so each row outlives its bound by at most that (what is
// kept how long: shared/oauth/purge.ts; the statements: shared/oauth/store/).
import type { ServiceContext } from '../../shared/context.js';
import type { Logger } from '../../shared/log.js';
import { purgeMcpSessions } from '../../shared/mcp/sessions.js';
import { purgeOAuth } from '../../shared/oauth/purge.js';
import type { Job } from './job.js';
import { purgeRun } from './purge.js';

export const oauthPurgeJob = (ctx: ServiceContext, log: Logger, intervalMs = 600_000): Job => ({
  name: 'OAuth purge',
  intervalMs,
  run: purgeRun(log, 'expired OAuth codes, tokens, sessions and windows, and ended MCP sessions', async () => {
    const now = ctx.now();
    return (await purgeOAuth(ctx, now)) + (await purgeMcpSessions(ctx, now));
  }),
});
