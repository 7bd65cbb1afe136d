// PROXY_WORKERS > 1: this process becomes a supervisor of N proxy workers (node:cluster) that share its port. Each
// worker is a whole proxy (its own database pool, caches and signer threads); nothing a payment needs is shared
// through memory, so the database keeps them exact. The supervisor serves nothing itself: it opens the listening
// socket and each worker accepts from it (cluster.SCHED_NONE, the kernel spreads the connections).
//
// Not Node's round-robin default, where the supervisor accepts every connection and passes it to a worker over its
// channel: a connection passed to a worker as it dies is never accepted nor closed (the supervisor keeps it until
// the worker's answer, which never comes), and its client hangs until it gives up. Accepting in the workers, a
// worker that dies takes down only the connections it had accepted (the clients see them closed, and retry), and
// the ones not yet accepted wait in the shared queue for another worker. NODE_CLUSTER_SCHED_POLICY, Node's own
// setting, still chooses when set.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { Config } from '../config/index.js';
import { isBrokenPipe } from '../shared/broken-pipes.js';
import { type Logger, exitWhenLogged } from '../shared/log.js';
import { DRAIN_MESSAGE, spawnedWithChannel, whenParentGone } from '../shared/shutdown.js';

/** Tells a worker its slot (set by the supervisor, never by an operator). */
export const WORKER_SLOT_ENV = 'PAYROUTE_PROXY_WORKER_SLOT';

/**
 * What a worker sends its supervisor once its proxy server listens (proxy/serve.ts). Not the cluster module's
 * 'listening' event: that is emitted for every server a worker listens with, and a worker's metrics listener
 * (PROXY_METRICS_PORT) listens first, so counting those announced the proxy ready, on the metrics port, before it
 * served.
 */
export const SERVING_MESSAGE_TYPE = 'payroute:serving';
const servingMessage = z.object({ type: z.literal(SERVING_MESSAGE_TYPE), port: z.number().int().min(1).max(65535) });

/** Tells the supervisor this worker serves on `port`. */
export function reportServing(port: number): void {
  // The supervisor may be gone already (the cluster module then ends this worker): nothing to tell.
  process.send?.({ type: SERVING_MESSAGE_TYPE, port }, undefined, undefined, () => {});
}

/** A worker that dies this many times within RESTART_WINDOW_MS stops the whole proxy: a crash loop needs a person. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

export function superviseWorkers(config: Config, log: Logger): void {
  const count = config.PROXY_WORKERS;
  // The workers not yet seen to exit. Not cluster.workers: the cluster module removes a worker from it only once
  // both its process has exited and its channel has closed, in whichever order those are reported, so at a
  // worker's 'exit' it may still be listed and "none left" would never be seen.
  const running = new Set<Worker>();
  /** Workers (by id) whose proxy server listens. */
  const serving = new Set<number>();
  const restarts: number[] = [];
  let announced = false;
  let stopping = false;
  let failed = false;

  // Each worker has a slot, 0 to count - 1, that its replacement takes over: the `worker` label of its metrics.
  const slots = new Map<number, number>();
  const fork = (slot: number): Worker => {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot) });
    slots.set(worker.id, slot);
    running.add(worker);
    // The supervisor writes to each worker's channel (the answer to its listen, the drain message, and with
    // round-robin scheduling each connection); a worker that died a moment before makes that write fail (EPIPE),
    // reported here. Unheard, it would end the supervisor and every other worker with it; its 'exit' replaces it.
    worker.on('error', (err: Error) => {
      if (isBrokenPipe(err)) log.warn({ worker: worker.process.pid, err }, 'proxy worker gone while writing to it');
      else log.error({ worker: worker.process.pid, err }, 'proxy worker channel error');
    });
    worker.on('message', (message: unknown) => {
      const parsed = servingMessage.safeParse(message);
      if (parsed.success) onServing(worker, parsed.data.port);
    });
    return worker;
  };

  const onServing = (worker: Worker, port: number): void => {
    if (!running.has(worker)) return;
    serving.add(worker.id);
    // Announced once, when every worker takes connections: the same readiness line a single proxy prints. Never
    // once stopping: the reader of stdout may be the very parent whose end stopped us.
    if (stopping) return;
    if (!announced && serving.size >= count) {
      announced = true;
      log.info({ host: config.HOST, port, workers: count }, 'proxy workers listening');
      process.stdout.write(`${JSON.stringify({ ready: 'proxy', port, workers: count })}\n`);
    } else if (announced) {
      log.info({ worker: worker.process.pid, slot: slots.get(worker.id), port }, 'proxy worker replaced');
    }
  };

  cluster.on('exit', (worker, code, signal) => {
    running.delete(worker);
    const served = serving.delete(worker.id);
    const slot = slots.get(worker.id) ?? 0;
    slots.delete(worker.id);
    if (stopping) {
      // A worker that could not drain cleanly makes the whole stop a failure the process manager sees; one stopped
      // while it was still starting had nothing to drain.
      if (served && code !== 0) failed = true;
      if (running.size === 0) void exitWhenLogged(log, failed ? 1 : 0);
      return;
    }
    // Whatever the code (0 included) or signal: a worker ends only when told to, so any other end is replaced.
    log.error({ worker: worker.process.pid, code, signal }, 'proxy worker exited; starting another');
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && (restarts[0] ?? now) < now - RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length > MAX_RESTARTS) {
      log.fatal({ restarts: restarts.length, windowMs: RESTART_WINDOW_MS }, 'proxy workers keep exiting; stopping');
      failed = true;
      stop('crash loop');
      return;
    }
    fork(slot);
  });

  const stop = (reason: string): void => {
    if (stopping) {
      // A second signal: stop now, as a single proxy does.
      for (const w of running) w.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    log.info({ reason }, 'stopping proxy workers');
    // Each worker drains on its own (its grace, its in-flight calls). A message, not a signal: on a terminal,
    // Ctrl-C already signalled every worker of the process group, and a second signal would cut the drain short.
    for (const w of running) {
      // A worker still starting has taken no call and has no drain of its own yet: it just stops.
      if (!serving.has(w.id)) w.process.kill('SIGTERM');
      else if (w.isConnected()) w.send(DRAIN_MESSAGE);
    }
    if (running.size === 0) void exitWhenLogged(log, failed ? 1 : 0);
    // The workers' own bound, plus room for their clean-up.
    setTimeout(() => {
      for (const w of running) w.process.kill('SIGKILL');
      void exitWhenLogged(log, 1, 1000);
    }, config.SHUTDOWN_GRACE_MS + 15_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  if (spawnedWithChannel()) whenParentGone(() => stop('parent exited'));

  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) cluster.schedulingPolicy = cluster.SCHED_NONE;
  // A worker runs the proxy's entry point, not whatever this process was started with: the image's entry point
  // (admin/cli/container.ts) takes its role word off argv before it loads the proxy, and a worker re-running it
  // with no role printed its usage and exited, again and again. Compiled (dist/) or the sources under tsx, as this
  // file runs; the workers inherit this process's execArgv (tsx's loader included).
  const entry = import.meta.url.endsWith('.ts') ? './server.ts' : './server.js';
  cluster.setupPrimary({ exec: fileURLToPath(new URL(entry, import.meta.url)), args: [] });
  for (let i = 0; i < count; i += 1) fork(i);
}
