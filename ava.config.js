export default {
  files: ['test/**/*.test.ts'],
  extensions: ['ts'],
  nodeArguments: ['--import=tsx'],
  concurrency: 2,
  timeout: '3m',
  workerThreads: false,
};
