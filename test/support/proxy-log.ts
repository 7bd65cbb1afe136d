// A proxy process of the stack logging to a file of its own, and the wait for what it logs (pino writes
// asynchronously, so a line can reach the file after the answer it tells of).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Spawned, Stack } from './stack.js';

/** Runs `body` against one more proxy of the stack with LOG_FILE set (and `env`); stops it and removes the file. */
export async function withLoggingProxy(
  stack: Stack,
  env: Record<string, string>,
  body: (proxy: Spawned, file: string) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'payroute-log-'));
  const file = join(dir, 'proxy.log');
  const proxy = await stack.spawn('proxy', { ...env, LOG_FILE: file });
  try {
    await body(proxy, file);
  } finally {
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The file's text once `ready` holds of it, read every 100 ms; after 300 reads the error `missing` names what
 * is still absent.
 */
export async function loggedText(
  file: string,
  ready: (text: string) => boolean,
  missing: (text: string) => string,
): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // not created yet
    }
    if (ready(text)) return text;
    if (attempt >= 300) throw new Error(missing(text));
    await new Promise((r) => setTimeout(r, 100));
  }
}
