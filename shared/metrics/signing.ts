// EIP-712 signatures of router payments (shared/protocols/digest-signer.ts): how long one takes from being asked
// for to being made (with the worker threads, most of it is the wait in their queue), and how many are waiting.
import { Gauge, Histogram } from 'prom-client';
import { PREFIX, collectors } from './collectors.js';

const latency = new Histogram({
  name: `${PREFIX}signing_duration_seconds`,
  help: 'Time from a payment signature being asked for to its being made (queueing for a signing thread included).',
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
  registers: [collectors],
});

const depth = new Gauge({
  name: `${PREFIX}signing_queue_depth`,
  help: 'Payment signatures asked for and not yet made (ROUTER_SIGNING_THREADS threads work them off).',
  registers: [collectors],
});

/** One signature, from being asked for (`sign` starts it) to being made or refused, counted in the queue meanwhile. */
export function timedSignature<T>(sign: () => Promise<T>): Promise<T> {
  const end = latency.startTimer();
  depth.inc();
  const signature = sign();
  const done = (): void => {
    depth.dec();
    end();
  };
  signature.then(done, done);
  return signature;
}
