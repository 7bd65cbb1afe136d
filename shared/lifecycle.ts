// A process's serving phase and the requests it has in flight: what /readyz answers from, and what a graceful stop
// waits for. A load balancer stops sending new calls when /readyz turns 503; the calls already inside (a paid call
// being relayed among them) are let finish and be recorded before the database is closed.

import { Server as NetServer } from 'node:net';

export type Phase = 'starting' | 'serving' | 'draining';

export interface Lifecycle {
  phase(): Phase;
  /** The process has opened its database and listens: /readyz may answer 200 (if the database answers). */
  serving(): void;
  /** A stop has begun: /readyz answers 503, responses ask the client to close its connection. */
  drain(): void;
  /**
   * Counts one request in flight until every piece of it has settled: the response closed (sent, or the client
   * gone) and the handler's own work (a payment recorded after the answer was streamed).
   */
  enter(): { settle(piece: Promise<unknown>): void; done(): void };
  readonly inFlight: () => number;
  /** Resolves true when nothing is in flight, or false when `graceMs` passed first. */
  idle(graceMs: number): Promise<boolean>;
}

export function createLifecycle(): Lifecycle {
  let phase: Phase = 'starting';
  let inFlight = 0;
  const waiters = new Set<() => void>();
  const leave = (): void => {
    inFlight -= 1;
    if (inFlight === 0) for (const wake of waiters) wake();
  };
  return {
    phase: () => phase,
    serving() {
      if (phase === 'starting') phase = 'serving';
    },
    drain() {
      phase = 'draining';
    },
    inFlight: () => inFlight,
    enter() {
      inFlight += 1;
      // The response's close and each settled piece are counted down together; the request leaves once all have.
      let open = 1;
      const down = (): void => {
        open -= 1;
        if (open === 0) leave();
      };
      let closed = false;
      return {
        settle(piece) {
          open += 1;
          piece.then(down, down);
        },
        done() {
          if (closed) return;
          closed = true;
          down();
        },
      };
    },
    idle(graceMs) {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(true);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          resolve(false);
        }, graceMs);
        timer.unref();
        waiters.add(wake);
      });
    },
  };
}

/** What a graceful stop needs of a node:http server (structural, so this module imports no node:http). */
export interface DrainableServer extends NetServer {
  closeAllConnections(): void;
}

/**
 * Stops serving: /readyz turns 503 and the listening socket closes (new connections are refused, and a balancer
 * retries those elsewhere: nothing was sent). Connections already open stay open while calls are in flight: a
 * pooled client that sends its next call on one gets an answer (with `connection: close`) instead of a reset it
 * could not safely retry, which closing idle connections at once (node:http's `server.close()`) risks. The calls in
 * flight get up to `graceMs` to finish and be recorded; whatever is still open then is closed. Resolves true when
 * everything finished within the grace.
 */
export async function drainServer(server: DrainableServer, lifecycle: Lifecycle, graceMs: number): Promise<boolean> {
  lifecycle.drain();
  const stopped = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const drained = await lifecycle.idle(graceMs);
  server.closeAllConnections();
  await stopped;
  return drained;
}

/**
 * Wraps a process's request listener: counts each request in flight until its response closed and the handler's
 * promise settled, and asks clients to close their connection once a stop began (RFC 9112 §9.6), so a client
 * reconnects to a process that is still serving.
 */
export function tracked<
  Req,
  Res extends { once(event: 'close', fn: () => void): unknown; setHeader(n: string, v: string): unknown },
>(lifecycle: Lifecycle, listener: (req: Req, res: Res) => unknown): (req: Req, res: Res) => void {
  return (req, res) => {
    const request = lifecycle.enter();
    res.once('close', request.done);
    if (lifecycle.phase() === 'draining') res.setHeader('connection', 'close');
    const work = listener(req, res);
    if (work instanceof Promise) request.settle(work);
  };
}
