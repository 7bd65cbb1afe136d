// PROXY_WORKERS > 1: this process becomes a supervisor of N proxy workers (node:cluster) that share its port; the
// kernel or the primary spreads connections among them (Node's default scheduling, round-robin except on Windows).
// Each worker is a whole proxy (its own database pool, caches and signer threads); nothing a payment needs is
// shared through memory, so the database keeps them exact. The supervisor serves nothing itself.
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/index.js';
import type { Logger } from '../shared/log.js';
import { DRAIN_MESSAGE, whenParentGone } from '../shared/shutdown.js';

/** Tells a worker its slot (set by the supervisor, never by an operator). */
export const WORKER_SLOT_ENV = 'PAYROUTE_PROXY_WORKER_SLOT';

/** A worker that dies this many times within RESTART_WINDOW_MS stops the whole proxy: a crash loop needs a person. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

export function superviseWorkers(config: Config, log: Logger): void {
  const count = config.PROXY_WORKERS;
  const listening = new Set<number>();
  const restarts: number[] = [];
  let announced = false;
  let stopping = false;
  let failed = false;

  // Each worker has a slot, 0 to count - 1, that its replacement takes over: the `worker` label of its metrics.
  const slots = new Map<number, number>();
  const fork = (slot: number): Worker => {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot) });
    slots.set(worker.id, slot);
    return worker;
  };

  cluster.on('listening', (worker, address) => {
    listening.add(worker.id);
    // Announced once, when every worker takes connections: the same readiness line a single proxy prints.
    if (!announced && listening.size >= count) {
      announced = true;
      log.info({ host: config.HOST, port: address.port, workers: count }, 'proxy workers listening');
      process.stdout.write(`${JSON.stringify({ ready: 'proxy', port: address.port, workers: count })}\n`);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const served = listening.delete(worker.id);
    if (stopping) {
      // A worker that could not drain cleanly makes the whole stop a failure the process manager sees; one stopped
      // while it was still starting had nothing to drain.
      if (served && code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    log.error({ worker: worker.process.pid, code, signal }, 'proxy worker exited; starting another');
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && (restarts[0] ?? now) < now - RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length > MAX_RESTARTS) {
      log.fatal({ restarts: restarts.length, windowMs: RESTART_WINDOW_MS }, 'proxy workers keep exiting; stopping');
      stop('crash loop');
      return;
    }
    fork(slots.get(worker.id) ?? 0);
    slots.delete(worker.id);
  });

  const stop = (reason: string): void => {
    if (stopping) {
      // A second signal: stop now, as a single proxy does.
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    log.info({ reason }, 'stopping proxy workers');
    // Each worker drains on its own (its grace, its in-flight calls). A message, not a signal: on a terminal,
    // Ctrl-C already signalled every worker of the process group, and a second signal would cut the drain short.
    for (const w of Object.values(cluster.workers ?? {})) {
      if (w === undefined) continue;
      // A worker still starting has taken no call and has no drain of its own yet: it just stops.
      if (!listening.has(w.id)) w.process.kill('SIGTERM');
      else if (w.isConnected()) w.send(DRAIN_MESSAGE);
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
    // The workers' own bound, plus room for their clean-up.
    setTimeout(() => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS + 15_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  if (process.channel !== undefined) whenParentGone(() => stop('parent exited'));

  for (let i = 0; i < count; i += 1) fork(i);
}
