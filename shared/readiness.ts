// GET /readyz of both processes: 200 while this process serves and its database answers with every migration
// applied; 503 while it starts or drains, or when the database does not. /healthz stays liveness: the process
// runs, whatever its database does (restarting a process for a database outage would not help).
import { z } from 'zod';
import type { Db } from './db/orm.js';
import { databaseState } from './db/readiness.js';
import type { Lifecycle } from './lifecycle.js';

/** A probe must answer well within a load balancer's own probe timeout (commonly 1-5 s). */
const DATABASE_PROBE_MS = 2_000;

/** The body of /readyz, 200 or 503 (the API description documents it from this schema). */
export const ReadinessBody = z.strictObject({
  status: z.enum(['ready', 'starting', 'draining', 'database_unreachable', 'migrations_pending']),
  service: z.enum(['admin', 'proxy']),
  /** Only with `migrations_pending`: the migrations this code knows that the database has not applied. */
  pendingMigrations: z.array(z.string()).optional(),
});

export interface ReadinessAnswer {
  readonly status: 200 | 503;
  readonly body: z.infer<typeof ReadinessBody>;
}

export async function readiness(service: 'admin' | 'proxy', lifecycle: Lifecycle, db: Db): Promise<ReadinessAnswer> {
  const phase = lifecycle.phase();
  if (phase !== 'serving') return { status: 503, body: { status: phase, service } };
  const state = await databaseState(db, DATABASE_PROBE_MS);
  // The phase may have turned while the database was asked: a draining process is not ready, whatever it says.
  if (lifecycle.phase() !== 'serving') return { status: 503, body: { status: 'draining', service } };
  if (state.ok) return { status: 200, body: { status: 'ready', service } };
  if (state.reason === 'migrations_pending')
    return { status: 503, body: { status: 'migrations_pending', service, pendingMigrations: [...state.pending] } };
  return { status: 503, body: { status: 'database_unreachable', service } };
}
