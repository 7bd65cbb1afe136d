// What the process tests look at from outside (Linux /proc): a process's children, which process holds a TCP
// connection, CPU load made on purpose; and the bounded waits they poll with.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds; throws naming `what` after `limitMs` (a loaded machine is slow, never this slow). */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  limitMs = 120_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(everyMs);
  }
  if (!(await check())) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
}

/** Polls `ready` until it holds or `limitMs` passed, and says whether it holds (a test asserts the answer). */
export async function waitUntil(
  ready: () => boolean | Promise<boolean>,
  limitMs = 120_000,
  everyMs = 20,
): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await ready()) return true;
    await sleep(everyMs);
  }
  return ready();
}

/** Races `promise` against `limitMs`; throws naming `what` if it does not settle in time. */
export async function within<T>(what: string, promise: Promise<T>, limitMs = 120_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${limitMs} ms waiting for ${what}`)), limitMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The process ids a process has started (Linux: its main thread's children list). */
export function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

/** Whether `pid` runs (a zombie, exited but not yet reaped by its parent, does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // /proc/<pid>/stat: "pid (comm) state ...": the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Which of `pids` holds the IPv4 TCP socket whose local port is `localPort` (the far end of a connection a server
 * in this process accepted, read from its remotePort): /proc/net/tcp gives the socket's inode, each process's
 * /proc/<pid>/fd its sockets' inodes.
 */
export function connectionOwner(localPort: number, pids: readonly number[]): number | undefined {
  const inodes = new Set<string>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const cols = line.trim().split(/\s+/);
    const port = cols[1]?.split(':')[1];
    if (port !== undefined && Number.parseInt(port, 16) === localPort && cols[9] !== undefined) inodes.add(cols[9]);
  }
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode !== undefined && inodes.has(inode)) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/** Busy processes that keep `n` cores loaded until stopped (and at most `limitMs`, should the test die first). */
export function cpuLoad(n: number, limitMs = 600_000): { stop(): void } {
  const children: ChildProcess[] = Array.from({ length: n }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${limitMs}; while (Date.now() < end);`], {
      stdio: 'ignore',
    }),
  );
  return {
    stop() {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
