// Where secp256k1 signatures are made. The signature is the one CPU-heavy step of a payment (~0.1-0.2 ms with
// libsecp256k1 here, a quarter of a mode A mint's CPU) and it is pure: a 32-byte digest and a key in, 65 bytes out.
// So it can run off the event loop: `threads > 0` starts that many worker threads, each signing with the same
// native addon, and the event loop keeps parsing, choosing and writing while they sign. `threads = 0` signs inline.
// Either way the bytes are those of `signAuthorization` (RFC 6979 deterministic nonces, low-s): tested.
//
// The key crosses to the worker in the message (a structured-clone copy in the same process's memory, never
// serialised or logged) and is not kept there after the signature.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import secp256k1 from 'secp256k1';

export interface DigestSigner {
  /** 65 bytes `r || s || v`, v = 27 + recovery id, of a 32-byte digest. */
  sign(digest: Uint8Array, key: Uint8Array): Promise<Uint8Array>;
  /** Stops the worker threads; signatures still pending are rejected. */
  close(): Promise<void>;
}

/** Signs on the calling thread: 65 bytes `r || s || v`. Throws on a key or digest libsecp256k1 refuses. */
export function signDigestNow(digest: Uint8Array, key: Uint8Array): Uint8Array {
  const { signature, recid } = secp256k1.ecdsaSign(digest, key);
  const out = new Uint8Array(65);
  out.set(signature, 0);
  out[64] = 27 + recid;
  return out;
}

/** Signs on the calling thread. */
export const inlineSigner: DigestSigner = {
  sign: (digest, key) => {
    try {
      return Promise.resolve(signDigestNow(digest, key));
    } catch (err) {
      return Promise.reject(err);
    }
  },
  close: () => Promise.resolve(),
};

// The worker's whole program, evaluated as CommonJS in the thread: it loads the addon from the path the main
// thread resolved (so it works the same under tsx, from a build, or in the container), and answers each batch of
// [id, digest, key] with [id, signature] or [id, null, message].
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const secp256k1 = require(workerData.secp256k1);
parentPort.on('message', (batch) => {
  const out = [];
  for (const [id, digest, key] of batch) {
    try {
      const { signature, recid } = secp256k1.ecdsaSign(digest, key);
      const sig = new Uint8Array(65);
      sig.set(signature, 0);
      sig[64] = 27 + recid;
      out.push([id, sig]);
    } catch (err) {
      out.push([id, null, String(err && err.message)]);
    }
    key.fill(0);
  }
  parentPort.postMessage(out);
});
`;

type Job = [id: number, digest: Uint8Array, key: Uint8Array];
type Answer = [id: number, signature: Uint8Array | null, error?: string];

interface Pending {
  resolve(sig: Uint8Array): void;
  reject(err: Error): void;
}

/**
 * `threads` worker threads taking batches: the signatures asked for in one event-loop turn go out as one message
 * per thread (posting a message costs about as much as the bookkeeping of a signature), round-robin.
 */
export function createDigestSigner(threads: number): DigestSigner {
  if (threads <= 0) return inlineSigner;
  const addon = createRequire(import.meta.url).resolve('secp256k1');
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let closed = false;

  const workers = Array.from({ length: threads }, () => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { secp256k1: addon } });
    w.on('message', (answers: Answer[]) => {
      for (const [id, sig, error] of answers) {
        const p = pending.get(id);
        if (p === undefined) continue;
        pending.delete(id);
        if (sig === null) p.reject(new Error(`signing failed: ${error ?? 'unknown error'}`));
        else p.resolve(sig);
      }
      if (pending.size === 0) idle();
    });
    w.on('error', (err) => failAll(err));
    w.unref();
    return w;
  });

  // Idle threads do not keep the process alive; while a signature is pending they do, like any I/O in flight.
  let refd = false;
  function busy(): void {
    if (refd) return;
    refd = true;
    for (const w of workers) w.ref();
  }
  function idle(): void {
    if (!refd) return;
    refd = false;
    for (const w of workers) w.unref();
  }

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    idle();
  }

  let queue: Job[] = [];
  let next = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const jobs = queue;
    queue = [];
    // Split the turn's jobs over the threads, a contiguous slice each.
    const per = Math.ceil(jobs.length / workers.length);
    for (let i = 0; i < jobs.length; i += per) {
      const worker = workers[next % workers.length];
      next += 1;
      worker?.postMessage(jobs.slice(i, i + per));
    }
  };

  return {
    sign(digest, key) {
      if (closed) return Promise.reject(new Error('the signer is closed'));
      return new Promise<Uint8Array>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        busy();
        // A copy of the key: the worker wipes its copy, the caller's cache keeps its own.
        queue.push([id, digest, Uint8Array.from(key)]);
        if (!scheduled) {
          scheduled = true;
          // After the poll phase: every request that arrived with this batch of socket reads is in the queue.
          setImmediate(flush);
        }
      });
    },
    async close() {
      closed = true;
      failAll(new Error('the signer is closed'));
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
