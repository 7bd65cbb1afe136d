// The SQLite WAL checkpointer of the admin process. Checkpointing (copying committed WAL pages into the database
// file, then an fsync) otherwise happens inside whichever COMMIT crosses `wal_autocheckpoint`: on the proxy, that
// is a payment's. Run here, once a second and PASSIVE (it never waits for writers), it keeps the WAL short while
// the proxy, whose threshold is raised (openDb `walAutocheckpointPages`), only checkpoints itself if this stops.
import type { Logger } from '../log.js';
import { type StopPeriodic, startPeriodic } from '../../admin/jobs/periodic.js';
import type { Db } from './orm.js';

export function startCheckpointer(db: Db, log: Logger, intervalMs = 1000): StopPeriodic {
  if (db.dialect !== 'sqlite') return async () => {};
  return startPeriodic(intervalMs, () =>
    db
      .checkpoint()
      .then(() => undefined)
      .catch((err: unknown) =>
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'WAL checkpoint failed'),
      ),
  );
}
