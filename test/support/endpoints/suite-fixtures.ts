// The endpoint fixtures of one database's suite. Not in index.ts: this registers an ava hook, and only a test
// file may load ava.
import test from 'ava';
import type { Stack } from '../stack.js';
import { type EndpointFixtures, endpointFixtures } from './index.js';

/**
 * The fixtures of one database's suite (call it inside forEachDb): built on the first test that asks for them,
 * closed after the suite's tests.
 */
export function suiteEndpointFixtures(stack: () => Stack): () => Promise<EndpointFixtures> {
  let fixtures: Promise<EndpointFixtures & { close(): Promise<void> }> | undefined;
  test.after.always(async () => {
    await (await fixtures)?.close();
  });
  return () => {
    fixtures ??= endpointFixtures(stack());
    return fixtures;
  };
}
