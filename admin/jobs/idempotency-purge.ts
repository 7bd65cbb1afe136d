// Expired Idempotency-Key rows, every 10 minutes (the statements: shared/idempotency/store.ts purgeExpired).
import type { ServiceContext } from '../../shared/context.js';
import { purgeExpired } from '../../shared/idempotency/store.js';
import type { Logger } from '../../shared/log.js';
import type { Job } from './job.js';
import { purgeRun } from './purge.js';

export const idempotencyPurgeJob = (ctx: ServiceContext, log: Logger, intervalMs = 600_000): Job => ({
  name: 'idempotency purge',
  intervalMs,
  run: purgeRun(log, 'expired idempotency keys', () => purgeExpired(ctx, ctx.now())),
});
