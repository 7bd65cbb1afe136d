// The schema's history for `npm run db:migrate -- status`, and reverting its last step for `-- down --yes`.
import { z } from 'zod';
import type { Db } from '../../shared/db/orm.js';

// MikroORM's history table (its default name: orm.ts does not rename it).
const HISTORY_TABLE = 'mikro_orm_migrations';

// MikroORM keeps the time as epoch milliseconds on SQLite; on PostgreSQL it is a timestamptz, which the driver may
// hand over as a Date or as PostgreSQL's text ('2026-11-24 19:37:39.590178+00': a space, microseconds, an hour-only
// offset), which is rewritten into ISO 8601 rather than left to Date's lenient, engine-specific parsing.
const PG_TIMESTAMPTZ = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?([+-]\d{2})(?::?(\d{2}))?$/;
const ExecutedAt = z.union([
  z.date(),
  z
    .number()
    .int()
    .nonnegative()
    .transform((ms) => new Date(ms)),
  z
    .string()
    .regex(PG_TIMESTAMPTZ)
    .transform((s) => {
      const [, day, time, fraction = '', hours, minutes = '00'] = PG_TIMESTAMPTZ.exec(s) ?? [];
      return new Date(`${day}T${time}.${fraction.padEnd(3, '0').slice(0, 3)}${hours}:${minutes}`);
    }),
]);
const HistoryRows = z.array(z.object({ name: z.string().min(1), executed_at: ExecutedAt }));

export interface MigrationStatus {
  /** Oldest first, as they were applied. */
  applied: { name: string; executedAt: string }[];
  /** In the order `up` would apply them. */
  pending: string[];
}

export async function migrationStatus(db: Db): Promise<MigrationStatus> {
  // First: it creates the history table on an empty database, so the query below always has one to read.
  const pending = await db.orm.migrator.getPending();
  const rows = HistoryRows.parse(
    await db.orm.em.getConnection().execute(`select name, executed_at from ${HISTORY_TABLE} order by id`),
  );
  return {
    applied: rows.map((r) => ({ name: r.name, executedAt: r.executed_at.toISOString() })),
    pending: pending.map((m) => m.name),
  };
}

export type RevertResult =
  | { kind: 'nothing' }
  | { kind: 'reverted'; name: string }
  /** Its down() failed (or it has none): its transaction rolled back, so it is still applied. */
  | { kind: 'failed'; name: string; reason: string };

/** Reverts the last applied migration with its down(), inside one transaction. */
export async function revertLast(db: Db): Promise<RevertResult> {
  const { applied } = await migrationStatus(db);
  const last = applied.at(-1);
  if (last === undefined) return { kind: 'nothing' };
  try {
    const [reverted] = await db.orm.migrator.down();
    return { kind: 'reverted', name: reverted?.name ?? last.name };
  } catch (err) {
    return { kind: 'failed', name: last.name, reason: err instanceof Error ? err.message : String(err) };
  }
}
