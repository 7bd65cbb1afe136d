import cluster from 'node:cluster';
import { type Logger, exitWhenLogged } from './log.js';
import { InvariantError } from './errors/invariant.js';

/** How often a process whose parent may vanish without a signal checks that it is still there. */
const PARENT_POLL_MS = 500;

/** Whether this process was spawned with an IPC channel (open or since closed: process.send stays). */
export function spawnedWithChannel(): boolean {
  return process.send !== undefined;
}

/**
 * The parent this process started under, read as it loads (the servers import this module before they start): a
 * parent that dies while the server is still starting has re-parented it before whenParentGone is called.
 */
const STARTING_PARENT = process.ppid;

/**
 * Calls `onGone` once this process's parent has gone: when a process manager or a shell signals only the top of a
 * process tree (`npm start`'s npm process, which forwards the signal to a `sh -c` that dies without forwarding it),
 * or when the parent is killed outright (SIGKILL, a crash), nothing else tells the processes below it, and they
 * would keep running under PID 1. A process spawned with an IPC channel (admin/cli/start.ts spawns the servers so)
 * learns it from the channel closing, which the kernel does when the parent exits, however it exits; any other
 * notices its parent PID change (the orphan is re-parented to init or a subreaper).
 *
 * Not for a node:cluster worker (it throws there): its channel belongs to the cluster module, which already ends
 * the worker when its supervisor is gone, and which needs that channel to keep the worker alive (see onShutdown).
 */
export function whenParentGone(onGone: () => void): void {
  if (cluster.isWorker)
    throw new InvariantError('whenParentGone is not for a cluster worker: node:cluster watches its parent');
  let gone = false;
  const fire = (): void => {
    if (gone) return;
    gone = true;
    clearInterval(poll);
    onGone();
  };
  if (spawnedWithChannel()) {
    // The channel may have closed already, while this process was starting (process.channel is then null).
    if (!process.connected) process.nextTick(fire);
    else process.once('disconnect', fire);
    // The channel must not keep this process alive on its own, nor stop it from exiting when it is done: a process
    // spawned by admin/cli/start.ts never waits on it (its own listening socket keeps it alive).
    process.channel?.unref();
  }
  const poll = setInterval(() => {
    if (process.ppid !== STARTING_PARENT) fire();
  }, PARENT_POLL_MS);
  poll.unref();
}

/** What a supervisor (proxy/cluster.ts) sends a worker to make it drain and exit, as SIGTERM would. */
export const DRAIN_MESSAGE = { type: 'payroute:drain' } as const;

/** Room for the clean-up after the drain (closing pools and threads) before the process gives up on it. */
const CLEANUP_MS = 10_000;

/**
 * Graceful stop on SIGINT/SIGTERM, on a supervisor's drain message, or when the parent that spawned it with an IPC
 * channel has gone: run the cleanup once (it drains within `graceMs`), then exit 0; exit 1 if the cleanup failed
 * or outlived the grace and its margin. A second signal exits at once.
 */
export function onShutdown(log: Logger, graceMs: number, cleanup: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => void exitWhenLogged(log, 1, 1000), graceMs + CLEANUP_MS);
    timer.unref();
    cleanup().then(
      () => exitWhenLogged(log, 0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        return exitWhenLogged(log, 1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A worker's drain message never exits at once: on a terminal it may already be stopping on the same Ctrl-C.
  if (cluster.isWorker) {
    process.on('message', (message: unknown) => {
      const drain = typeof message === 'object' && message !== null && 'type' in message;
      if (drain && message.type === DRAIN_MESSAGE.type && !stopping) stop('drain');
    });
  }
  // Only a process spawned with an IPC channel by admin/cli/start.ts stops with its parent: one started some other
  // way may be meant to outlive the shell that started it (nohup, a double fork), and its parent PID then changes.
  // Never a cluster worker: the cluster module exits it when its supervisor's channel closes, and its channel must
  // stay referenced. A worker waits on it for its supervisor's answer to its listen (and, with Node's round-robin
  // scheduling, for every connection): with the channel unreferenced, nothing else kept the worker's event loop
  // alive meanwhile, and it exited 0 before listening on a loaded machine.
  if (spawnedWithChannel() && !cluster.isWorker) {
    whenParentGone(() => {
      if (!stopping) stop('parent exited');
    });
  }
}
