// Loaded into every ava worker before its test file (ava.config.js nodeArguments). Each test file runs in a worker
// process of its own (workerThreads: false).
//
// 1. fetch is bounded: a request the service never answers fails its test with undici's named timeout error after
//    FETCH_LIMIT_MS, instead of the 300 s undici waits by default for each of the head and every body chunk.
// 2. When PAYROUTE_TEST_TIMINGS names a folder, the worker writes there how long its test file took from the
//    worker's start to its exit, set-up and clean-up hooks included, so run-tests.ts can name the slowest files. ava
//    tells the worker its file in its first IPC message, which this only looks at.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, setGlobalDispatcher } from 'undici';

/** As test/support/http.ts bounds its API calls: a loaded 2-core machine is slow, never this slow. */
const FETCH_LIMIT_MS = 180_000;
// The global dispatcher is shared with Node's own fetch (undici keeps it under a global symbol).
setGlobalDispatcher(new Agent({ headersTimeout: FETCH_LIMIT_MS, bodyTimeout: FETCH_LIMIT_MS, connectTimeout: 30_000 }));

const folder = process.env.PAYROUTE_TEST_TIMINGS;
if (folder !== undefined && folder !== '' && process.send !== undefined) {
  let file: string | undefined;
  const peek = (message: unknown) => {
    const ava = (message as { ava?: { type?: unknown; options?: { file?: unknown } } } | null)?.ava;
    if (ava?.type !== 'options') return;
    if (typeof ava.options?.file === 'string') file = ava.options.file;
    // A 'message' listener keeps the IPC channel referenced: take it off once it has served.
    process.off('message', peek);
  };
  process.on('message', peek);
  process.on('exit', () => {
    if (file === undefined) return;
    const line = `${JSON.stringify({ file, ms: Math.round(process.uptime() * 1000) })}\n`;
    appendFileSync(join(folder, `${process.pid}.jsonl`), line);
  });
}
