// A purge job's run: `purge` deletes what is past keeping and resolves with how many rows it deleted; a run that
// deleted something is logged as `what`, a failure as a warning (the next run tries again).
import type { Logger } from '../../shared/log.js';
import { messageOf } from './job.js';

export const purgeRun =
  (log: Pick<Logger, 'info' | 'warn'>, what: string, purge: () => Promise<number>) => (): Promise<void> =>
    purge()
      .then((n) => {
        if (n > 0) log.info({ purged: n }, `purged ${what}`);
      })
      .catch((err: unknown) => log.warn({ err: messageOf(err) }, `purge of ${what} failed`));
