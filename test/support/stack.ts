// Starts the real admin and proxy processes on ephemeral ports against a fresh database, plus an in-test
// ServiceContext on the same database (to create users like the CLI does and to assert on rows).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/index.js';
import { type CreatedUser, createUser } from '../../shared/accounts/users.js';
import { type ServiceContext, createContext } from '../../shared/context.js';
import { createLogger } from '../../shared/log.js';
import { type DbKind, type TestDatabase, createTestDatabase } from './databases.js';
import { type ApiClient, apiClient } from './http.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Stack {
  readonly kind: DbKind;
  readonly db: TestDatabase;
  readonly adminUrl: string;
  readonly proxyUrl: string;
  /** Base of the interface: {base_url} = proxy + /api/v1. */
  readonly baseUrl: string;
  readonly ctx: ServiceContext;
  readonly env: Record<string, string>;
  /** Process ids of the stack's own admin and proxy children (for resource sampling, e.g. the load benchmark). */
  readonly pids: { readonly admin: number; readonly proxy: number };
  /** Creates a user (as the CLI does) and an API client bound to its key, talking to the proxy. */
  user(email?: string): Promise<CreatedUser & { api: ApiClient }>;
  /**
   * Starts one more process of the given kind against the same database; `image-proxy` is the proxy as the container
   * image starts it (admin/cli/container.ts proxy).
   */
  spawn(kind: 'admin' | 'proxy' | 'image-proxy', extraEnv?: Record<string, string>): Promise<Spawned>;
  stop(): Promise<void>;
}

/** A process started with `Stack.spawn`. */
export interface Spawned {
  readonly url: string;
  readonly child: ChildProcess;
  /** Resolves with how the process ended (an exit code, or the signal that killed it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last STDERR_KEPT characters it wrote to stderr (its log lines at the stack's LOG_LEVEL). */
  stderr(): string;
  stop(): Promise<void>;
}

/** Bounds a start that fails: a loaded machine (CI with other jobs) can take far longer than an idle one. */
const READY_LIMIT_MS = 120_000;
const STDERR_KEPT = 64_000;

function startProcess(
  entry: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-STDERR_KEPT);
      // TEST_CHILD_STDERR=1 shows what the processes log (debugging a 5xx seen by a test).
      if (process.env.TEST_CHILD_STDERR === '1') process.stderr.write(d);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} did not become ready within ${READY_LIMIT_MS} ms:\n${stderr.slice(-4000)}`));
    }, READY_LIMIT_MS);
    if (child.stdout === null) throw new Error('no stdout');
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { ready?: string; port?: number };
        if (msg.ready !== undefined && typeof msg.port === 'number') {
          clearTimeout(timer);
          resolve({ child, port: msg.port, stderr: () => stderr });
        }
      } catch {
        // not a readiness line
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${stderr.slice(-4000)}`));
    });
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  // A child killed by a signal has exitCode null and signalCode set; its 'exit' has been emitted already.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

export interface StackOptions {
  /**
   * The database URL the stack's processes use, from the test database's own (the in-test context keeps the direct
   * one): e.g. through a TCP forwarder the test can break (tcp-fault.ts).
   */
  processDatabaseUrl?(url: string): string;
}

export async function startStack(
  kind: DbKind,
  extraEnv: Record<string, string> = {},
  opts: StackOptions = {},
): Promise<Stack> {
  const db = await createTestDatabase(kind);
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-data-'));
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: db.url,
    SECRETS_KEY: randomBytes(32).toString('hex'),
    ENVIRONMENT: 'sandbox',
    // One issuer for every process of the stack (tokens signed by one admin verify in another).
    PUBLIC_URL: 'http://payroute.test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    // Every test calls from 127.0.0.1, and the tests of a file share a stack: the device authorization limits would
    // count them all together. test/oauth/oauth-device-limits.test.ts sets its own.
    OAUTH_DEVICE_AUTH_LIMIT_PER_ADDRESS: '1000000',
    OAUTH_DEVICE_AUTH_LIMIT_PER_CLIENT: '1000000',
    ...extraEnv,
  };
  // The test's own context (its assertions' reads, its fixtures) waits up to 30 s for a PostgreSQL connection, not the
  // servers' 5 s: a file's tests run at once and share its pool, and on a loaded 2-core machine a wait past 5 s is
  // the machine, not the service. The processes keep their own setting (the 503 it bounds is tested there).
  const config = loadConfig({ ...env, DATABASE_CONNECT_TIMEOUT_MS: env.DATABASE_CONNECT_TIMEOUT_MS ?? '30000' });
  const ctx = await createContext(config, createLogger({ LOG_LEVEL: 'warn' }, 'test'), { migrate: true });
  if (opts.processDatabaseUrl !== undefined) env.DATABASE_URL = opts.processDatabaseUrl(db.url);
  const children: ChildProcess[] = [];
  let adminUrl: string;
  let adminPid: number;
  let proxy: { child: ChildProcess; port: number };
  try {
    // Ephemeral ports unless the caller fixes them (the load-test kit serves on documented ports).
    const admin = await startProcess('admin/server.ts', {
      ...env,
      ADMIN_PORT: extraEnv.ADMIN_PORT ?? '0',
      PAYROUTE_SKIP_MIGRATE: '1',
    });
    children.push(admin.child);
    adminPid = admin.child.pid ?? -1;
    adminUrl = `http://127.0.0.1:${admin.port}`;
    proxy = await startProcess('proxy/server.ts', {
      ...env,
      PROXY_PORT: extraEnv.PROXY_PORT ?? '0',
      ADMIN_URL: adminUrl,
    });
    children.push(proxy.child);
  } catch (err) {
    // Leave nothing running behind a failed start.
    await Promise.all(children.map(stopProcess));
    await ctx.db.close();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const proxyUrl = `http://127.0.0.1:${proxy.port}`;
  let n = 0;
  return {
    kind,
    db,
    adminUrl,
    proxyUrl,
    baseUrl: `${proxyUrl}/api/v1`,
    ctx,
    env,
    pids: { admin: adminPid, proxy: proxy.child.pid ?? -1 },
    async user(email) {
      n += 1;
      const u = await createUser(ctx, email ?? `user${n}-${randomBytes(3).toString('hex')}@example.test`);
      return { ...u, api: apiClient(`${proxyUrl}/api/v1`, u.apiKey) };
    },
    async spawn(which, more = {}) {
      const [entry, ...args] =
        which === 'admin'
          ? ['admin/server.ts']
          : which === 'proxy'
            ? ['proxy/server.ts']
            : ['admin/cli/container.ts', 'proxy'];
      const p = await startProcess(
        entry ?? '',
        {
          ...env,
          ADMIN_PORT: '0',
          PROXY_PORT: '0',
          ADMIN_URL: adminUrl,
          PAYROUTE_SKIP_MIGRATE: '1',
          ...more,
        },
        args,
      );
      children.push(p.child);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        if (p.child.exitCode !== null || p.child.signalCode !== null)
          resolve({ code: p.child.exitCode, signal: p.child.signalCode });
        else p.child.once('exit', (code, signal) => resolve({ code, signal }));
      });
      return {
        url: `http://127.0.0.1:${p.port}`,
        child: p.child,
        exited,
        stderr: p.stderr,
        stop: () => stopProcess(p.child),
      };
    },
    async stop() {
      await Promise.all(children.map(stopProcess));
      await ctx.db.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const secondAdmins = new Map<Stack, Promise<{ url: string }>>();
/** A second admin process on the stack's database, started once per stack (stack.stop() stops it with the others). */
export function secondAdmin(stack: Stack): Promise<{ url: string }> {
  let p = secondAdmins.get(stack);
  if (p === undefined) {
    p = stack.spawn('admin');
    secondAdmins.set(stack, p);
  }
  return p;
}

const secondProxies = new Map<Stack, Promise<Spawned>>();
/**
 * The proxies a race is spread over: on PostgreSQL the stack's and a second process on the same database (started
 * once per stack; stack.stop() stops it with the others), on SQLite the stack's one.
 */
export async function raceProxies(stack: Stack): Promise<string[]> {
  if (stack.kind !== 'postgresql') return [stack.proxyUrl];
  let second = secondProxies.get(stack);
  if (second === undefined) {
    second = stack.spawn('proxy');
    secondProxies.set(stack, second);
  }
  return [stack.proxyUrl, (await second).url];
}

type StackUser = Awaited<ReturnType<Stack['user']>>;
type Users<N extends number, R extends StackUser[] = []> = R['length'] extends N ? R : Users<N, [StackUser, ...R]>;

/** `n` new users of the stack, created at once (a tuple, so each can be named by destructuring). */
export function newUsers<N extends number>(stack: Stack, n: N): Promise<Users<N>> {
  return Promise.all(Array.from({ length: n }, () => stack.user())) as Promise<Users<N>>;
}
