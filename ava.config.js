export default {
  files: ['test/**/*.test.ts'],
  extensions: ['ts'],
  // worker-setup.ts: fetch bounded, and each test file's duration for the slowest files run-tests.ts prints.
  nodeArguments: ['--import=tsx', '--import=./test/support/worker-setup.ts'],
  concurrency: 2,
  // Only bounds a hung test (no result within it): a loaded machine may take minutes for one that passes. A test
  // must never set t.timeout() above this: ava then ignores this bound for that long (run-tests.ts has a watchdog).
  timeout: '10m',
  workerThreads: false,
};
