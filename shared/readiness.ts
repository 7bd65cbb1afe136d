// GET /readyz of both processes: 200 while this process serves, its database answers with every migration
// applied, and the data is still sealed with this process's secrets key; 503 while it starts or drains, or when
// the database does not, or when the key no longer opens the data (a rotation ran under a process still up).
// /healthz stays liveness: the process runs, whatever its database does (restarting a process for a database
// outage would not help).
import { z } from 'zod';
import type { SecretBox } from './crypto/secrets.js';
import type { Db } from './db/orm.js';
import { databaseState } from './db/readiness.js';
import type { Lifecycle } from './lifecycle.js';
import { keyStillMatches } from './secrets/key-check.js';

/** A probe must answer well within a load balancer's own probe timeout (commonly 1-5 s). */
const DATABASE_PROBE_MS = 2_000;

/** The body of /readyz, 200 or 503 (the API description documents it from this schema). */
export const ReadinessBody = z.strictObject({
  status: z.enum([
    'ready',
    'starting',
    'draining',
    'database_unreachable',
    'migrations_pending',
    'secrets_key_mismatch',
  ]),
  service: z.enum(['admin', 'proxy']),
  /** Only with `migrations_pending`: the migrations this code knows that the database has not applied. */
  pendingMigrations: z.array(z.string()).optional(),
});

export interface ReadinessAnswer {
  readonly status: 200 | 503;
  readonly body: z.infer<typeof ReadinessBody>;
}

/** The key check, bounded like the migrations read: a hung database answers "not ready", never a hung probe. */
async function keyState(
  db: Db,
  box: SecretBox,
  timeoutMs: number,
): Promise<'match' | 'mismatch' | 'timeout' | 'error'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    timer.unref();
  });
  const read = keyStillMatches(db, box).then(
    (ok) => (ok ? ('match' as const) : ('mismatch' as const)),
    () => 'error' as const,
  );
  const result = await Promise.race([read, timeout]);
  clearTimeout(timer);
  return result;
}

export async function readiness(
  service: 'admin' | 'proxy',
  lifecycle: Lifecycle,
  ctx: { readonly db: Db; readonly box: SecretBox },
): Promise<ReadinessAnswer> {
  const phase = lifecycle.phase();
  if (phase !== 'serving') return { status: 503, body: { status: phase, service } };
  const started = Date.now();
  const state = await databaseState(ctx.db, DATABASE_PROBE_MS);
  const key = state.ok
    ? await keyState(ctx.db, ctx.box, Math.max(1, DATABASE_PROBE_MS - (Date.now() - started)))
    : undefined;
  // The phase may have turned while the database was asked: a draining process is not ready, whatever it says.
  if (lifecycle.phase() !== 'serving') return { status: 503, body: { status: 'draining', service } };
  if (state.ok && key === 'match') return { status: 200, body: { status: 'ready', service } };
  if (key === 'mismatch') return { status: 503, body: { status: 'secrets_key_mismatch', service } };
  if (!state.ok && state.reason === 'migrations_pending')
    return { status: 503, body: { status: 'migrations_pending', service, pendingMigrations: [...state.pending] } };
  return { status: 503, body: { status: 'database_unreachable', service } };
}
