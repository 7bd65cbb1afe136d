// Starting PROXY_WORKERS=2 on a loaded machine, again and again: each start becomes ready with both workers it
// forked (none lost and replaced on the way), and SIGTERM stops it with exit 0. The defect this guards against: a
// worker exited 0 while it waited for its supervisor to answer its listen (nothing kept its event loop alive), and
// the supervisor, answering a worker that was gone, died of the EPIPE. The worker's side is the same however the
// supervisor is started (`npm start` or `npm run start:proxy`), so proxy/server.ts is started directly. SQLite only:
// a PostgreSQL pool's idle sockets kept the worker's event loop alive and hid the defect.
import { availableParallelism } from 'node:os';
import test from 'ava';
import { type Stack, startStack } from '../support/stack.js';
import { alive, childrenOf, cpuLoad, within } from '../support/processes.js';

const STARTS = 5;

let s: Stack | undefined;
test.before(async () => {
  s = await startStack('sqlite');
});
test.after.always(async () => {
  await s?.stop();
});

test(`PROXY_WORKERS=2 under CPU load: ${STARTS} starts each ready with no worker lost, each stopped by SIGTERM with exit 0`, async (t) => {
  if (s === undefined) throw new Error('stack not started');
  for (let i = 1; i <= STARTS; i += 1) {
    // A busy process per core while the proxy starts: each worker's start competes for the CPU, as on a loaded
    // machine. Only then: the other test files running meanwhile get the machine back for the rest.
    const load = cpuLoad(availableParallelism());
    t.teardown(() => load.stop());
    // Rejects, with the supervisor's log, if it exits first or is not ready within the stack's bound.
    const proxy = await s.spawn('proxy', { PROXY_WORKERS: '2' }).finally(() => load.stop());
    try {
      const log = () => `start ${i}:\n${proxy.stderr()}`;
      const workers = childrenOf(proxy.child.pid ?? -1);
      t.is(workers.length, 2, log());
      const ready = await fetch(`${proxy.url}/readyz`, { signal: AbortSignal.timeout(60_000) });
      t.is(ready.status, 200, log());
      // The supervisor logs every worker it replaces: none was.
      t.deepEqual(
        proxy
          .stderr()
          .split('\n')
          .filter((l) => l.includes('proxy worker exited')),
        [],
        log(),
      );
      proxy.child.kill('SIGTERM');
      t.deepEqual(await within(`start ${i} stopping`, proxy.exited, 120_000), { code: 0, signal: null }, log());
      for (const w of workers) t.false(alive(w), `start ${i}: worker ${w} is gone`);
    } finally {
      await proxy.stop();
    }
  }
});
