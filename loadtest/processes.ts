// The child processes a load run starts (the counterparts of loadtest/servers.ts, and the stack's admin and proxy),
// kept in one registry so that every way out — the end of the run, a failure, Ctrl-C, a watchdog — can stop them all.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A counterpart of loadtest/servers.ts, serving on 127.0.0.1. */
export interface Child {
  readonly role: string;
  readonly pid: number;
  readonly url: string;
  stop(): Promise<void>;
}

const children: ChildProcess[] = [];
/** Processes started elsewhere (the stack's admin and proxy): signalled by killAll, stopped by their owner. */
const foreignPids: number[] = [];

export function registerPids(...pids: number[]): void {
  foreignPids.push(...pids);
}

/** The last resort (a watchdog, a second Ctrl-C): signals every process this run started, without waiting. */
export function killAll(signal: NodeJS.Signals): void {
  for (const c of children) c.kill(signal);
  for (const pid of foreignPids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Stops every counterpart still running (the orderly way: SIGTERM, SIGKILL after 5 s). */
export async function stopChildren(): Promise<void> {
  await Promise.all(children.map(stopChild));
}

/**
 * Starts `node --import tsx loadtest/servers.ts <role>` on `port` (0: a free one) and waits for its readiness line.
 */
export function startChild(role: string, env: Record<string, string> = {}, port = 0): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'loadtest/servers.ts', role], {
      cwd: ROOT,
      env: { ...process.env, ...env, BENCH_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${role} did not become ready:\n${stderr}`));
    }, 30_000);
    if (child.stdout === null) throw new Error('no stdout');
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; port?: number };
        if (msg.ready === role && typeof msg.port === 'number') {
          clearTimeout(timer);
          resolve({
            role,
            pid: child.pid ?? -1,
            url: `http://127.0.0.1:${msg.port}`,
            stop: () => stopChild(child),
          });
        }
      } catch {
        // not the readiness line
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} exited with ${code}:\n${stderr}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}
