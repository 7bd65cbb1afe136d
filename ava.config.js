export default {
  files: ['test/**/*.test.ts'],
  extensions: ['ts'],
  nodeArguments: ['--import=tsx'],
  concurrency: 2,
  // Only bounds a hung test (no result within it): a loaded machine may take minutes for one that passes.
  timeout: '10m',
  workerThreads: false,
};
