// Stops as the servers do (shared/shutdown.ts onShutdown), logging on its way out: what test/operations/shutdown-parent.test.ts
// stops. Prints `started <pid>` on stdout at once, then, after SHUTDOWN_CHILD_STARTING_MS (a server's start: its
// database, its keys), puts its stop handlers in place and prints `ready`; `stopped` once its clean-up ran.
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../shared/log.js';
import { onShutdown } from '../../shared/shutdown.js';

const log = createLogger(loadConfig(), 'shutdown-child');
process.stdout.write(`started ${process.pid}\n`);
await new Promise((resolve) => setTimeout(resolve, Number(process.env.SHUTDOWN_CHILD_STARTING_MS ?? 0)));
onShutdown(log, 1000, async () => {
  log.info('closing the pools');
  log.info('pools closed');
  process.stdout.write('stopped\n');
});
// What a server's listening socket does: keeps the process alive until it is stopped.
setInterval(() => {}, 60_000);
process.stdout.write('ready\n');
