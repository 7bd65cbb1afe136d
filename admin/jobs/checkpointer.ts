// The SQLite WAL checkpointer of the admin process. Checkpointing (copying committed WAL pages into the database
// file, then an fsync) otherwise happens inside whichever COMMIT crosses `wal_autocheckpoint`: on the proxy, that
// is a payment's. Run here, once a second and PASSIVE (it never waits for writers), it keeps the WAL short while
// the proxy, whose threshold is raised (openDb `walAutocheckpointPages`), only checkpoints itself if this stops.
// The proxy runs no checkpointer of its own.
import type { Db } from '../../shared/db/orm.js';
import type { Logger } from '../../shared/log.js';
import { type Job, messageOf } from './job.js';

/** The checkpointer on SQLite; none on PostgreSQL (no WAL file of ours to keep short). */
export function checkpointJobs(db: Db, log: Logger, intervalMs = 1000): Job[] {
  if (db.dialect !== 'sqlite') return [];
  return [
    {
      name: 'WAL checkpoint',
      intervalMs,
      run: () =>
        db
          .checkpoint()
          .then(() => undefined)
          .catch((err: unknown) => log.warn({ err: messageOf(err) }, 'WAL checkpoint failed')),
    },
  ];
}
