// The official-library merchants of a test file, started before its tests and closed after them. Not in
// router-fixtures.ts: this registers ava hooks, and only a test file may load ava.
import test from 'ava';
import { type Merchants, startMerchants } from './router-fixtures.js';

/**
 * The three merchants at `usdcAmount`, started before the file's tests and closed after them (call it at the top
 * of a test file, before the hooks that use them). The fields read the started merchants.
 */
export function merchantsOfFile(usdcAmount: bigint): Merchants {
  let started: Merchants | undefined;
  test.before(async () => {
    started = await startMerchants(usdcAmount);
  });
  test.after.always(async () => {
    await started?.close();
  });
  const get = (): Merchants => {
    if (started === undefined) throw new Error('the merchants are not started');
    return started;
  };
  return {
    get chain() {
      return get().chain;
    },
    get v2() {
      return get().v2;
    },
    get v1() {
      return get().v1;
    },
    get mpp() {
      return get().mpp;
    },
    close: () => get().close(),
  };
}
