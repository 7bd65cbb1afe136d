// Where EIP-712 signatures are made. Hashing and signing are the CPU-heavy steps of a payment (measured here: the
// two keccak256 of an EIP-3009 digest ~95 µs in JS, the libsecp256k1 signature ~85 µs; together a quarter of a
// mode A issuance CPU) and they are pure: a domain separator, an encoded struct and a key in, 65 bytes out. So they
// can run off the event loop: `threads > 0` starts that many worker threads, each hashing with the same
// @noble/hashes keccak and signing with the same native addon, while the event loop goes on parsing, choosing and
// writing. `threads = 0` does it inline. Either way the bytes are those of `signAuthorization` (EIP-712 digest,
// RFC 6979 deterministic nonce, low-s): tested against it and against viem.
//
// The key crosses to the worker in the message (a structured-clone copy in the same process's memory, never
// serialised or logged) and is not kept there after the signature.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { keccak_256 } from '@noble/hashes/sha3';
import secp256k1 from 'secp256k1';
import { timedSignature } from '../metrics/signing.js';

/** An EIP-712 message ready to hash: the 32-byte domain separator and encodeData(struct) with its type hash. */
export interface TypedStruct {
  readonly domainSeparator: Uint8Array;
  readonly encodedStruct: Uint8Array;
}

/** The EIP-712 digest: keccak256(0x19 0x01 || domainSeparator || hashStruct(message)). */
export function typedDigest(t: TypedStruct): Uint8Array {
  const message = new Uint8Array(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(t.domainSeparator, 2);
  message.set(keccak_256(t.encodedStruct), 34);
  return keccak_256(message);
}

export interface DigestSigner {
  /**
   * 65 bytes `r || s || v` (v = 27 + recovery id) over the EIP-712 digest
   * keccak256(0x19 0x01 || domainSeparator || keccak256(encodedStruct)) (EIP-712 §"Specification").
   */
  sign(typed: TypedStruct, key: Uint8Array): Promise<Uint8Array>;
  /** Stops the worker threads; signatures still pending are rejected. */
  close(): Promise<void>;
}

/** Hashes and signs on the calling thread: 65 bytes `r || s || v`. Throws on a key libsecp256k1 refuses. */
export function signTypedNow(typed: TypedStruct, key: Uint8Array): Uint8Array {
  const { signature, recid } = secp256k1.ecdsaSign(typedDigest(typed), key);
  const out = new Uint8Array(65);
  out.set(signature, 0);
  out[64] = 27 + recid;
  return out;
}

/** Signs on the calling thread. */
export const inlineSigner: DigestSigner = {
  sign: (typed, key) =>
    timedSignature(() => {
      try {
        return Promise.resolve(signTypedNow(typed, key));
      } catch (err) {
        return Promise.reject(err);
      }
    }),
  close: () => Promise.resolve(),
};

// The worker's whole program, evaluated as CommonJS in the thread: it loads keccak and the addon from the paths
// the main thread resolved (so it works the same under tsx, from a build, or in the container), computes the
// digest exactly as typedDigest does, and answers each [id, domainSeparator, encodedStruct, key] of a batch with
// [[id, signature]] or [[id, null, message]] as soon as it is signed: a batch answered at once would hold every
// request of the batch until the last signature (a convoy: mode A at 16 in flight went from 0.25x to 0.28x).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { keccak_256 } = require(workerData.sha3);
const secp256k1 = require(workerData.secp256k1);
parentPort.on('message', (batch) => {
  for (const [id, domainSeparator, encodedStruct, key] of batch) {
    // Nothing a job holds may end the thread: every failure is that job's answer.
    try {
      const message = new Uint8Array(66);
      message[0] = 0x19;
      message[1] = 0x01;
      message.set(domainSeparator, 2);
      message.set(keccak_256(encodedStruct), 34);
      const { signature, recid } = secp256k1.ecdsaSign(keccak_256(message), key);
      const sig = new Uint8Array(65);
      sig.set(signature, 0);
      sig[64] = 27 + recid;
      parentPort.postMessage([[id, sig]]);
    } catch (err) {
      parentPort.postMessage([[id, null, String(err && err.message)]]);
    }
    if (key instanceof Uint8Array) key.fill(0);
  }
});
`;

type Job = [id: number, domainSeparator: Uint8Array, encodedStruct: Uint8Array, key: Uint8Array];
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
  const require = createRequire(import.meta.url);
  const paths = { sha3: require.resolve('@noble/hashes/sha3'), secp256k1: require.resolve('secp256k1') };
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let closed = false;

  const start = (slot: number): Worker => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: paths });
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
    // A thread that ended unasked (an uncaught error, an addon crash) is replaced, so later signatures are not
    // posted to it for ever: what it held was rejected by 'error' (or is rejected here).
    w.on('exit', () => {
      if (closed) return;
      failAll(new Error('a signing thread stopped'));
      workers[slot] = start(slot);
      if (refd) workers[slot]?.ref();
    });
    w.unref();
    return w;
  };
  const workers = Array.from({ length: threads }, (_, slot) => start(slot));

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
    sign(typed, key) {
      if (closed) return Promise.reject(new Error('the signer is closed'));
      return timedSignature(
        () =>
          new Promise<Uint8Array>((resolve, reject) => {
            const id = nextId++;
            pending.set(id, { resolve, reject });
            busy();
            // A copy per job: postMessage clones an array that occurs twice in one batch ONCE, and the worker wipes
            // each job's key after use (the caller keeps its own).
            queue.push([id, typed.domainSeparator, typed.encodedStruct, key.slice()]);
            if (!scheduled) {
              scheduled = true;
              // After the poll phase: every request that arrived with this batch of socket reads is in the queue.
              setImmediate(flush);
            }
          }),
      );
    },
    async close() {
      closed = true;
      failAll(new Error('the signer is closed'));
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
