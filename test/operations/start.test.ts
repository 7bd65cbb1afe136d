// `npm start` (admin/cli/start.ts) on a fresh machine: migrations, both processes up, the proxy forwarding to the
// admin process, prefixed logs, and a clean stop of everything on SIGTERM, also when the signal goes to the npm
// process (as a process manager sends it) rather than to the launcher. Limits only bound a failure: nothing here
// measures time.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { freePort, listening } from '../support/ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const START = join(ROOT, 'admin/cli/start.ts');
const TSX = import.meta.resolve('tsx');

interface Launcher {
  child: ChildProcess;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function launch(cwd: string, env: Record<string, string | undefined>): Launcher {
  const child = spawn(process.execPath, ['--env-file-if-exists=.env', '--import', TSX, START], {
    cwd,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (stream !== null) createInterface({ input: stream }).on('line', (l) => lines.push(l));
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited };
}

async function waitHealthy(url: string, launcher: Launcher, ms = 120_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (launcher.child.exitCode !== null) throw new Error(`launcher exited early:\n${launcher.lines.join('\n')}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not healthy after ${ms} ms:\n${launcher.lines.join('\n')}`);
}

/** PIDs of the admin and proxy children, from their prefixed pino lines. */
function childPids(lines: string[]): number[] {
  const pids = new Set<number>();
  for (const line of lines) {
    const m = /^\[(admin|proxy)\] (\{.*\})$/.exec(line);
    if (m === null) continue;
    try {
      const pid = (JSON.parse(m[2] ?? '') as { pid?: unknown }).pid;
      if (typeof pid === 'number') pids.add(pid);
    } catch {
      // not JSON
    }
  }
  return [...pids];
}

/** Bounds a stop that fails; a working stop takes the shutdown grace at most (10 s, 12 s for the launcher). */
const STOP_LIMIT_MS = 60_000;

/** Whether `pid` runs (a zombie, exited but not yet reaped by its parent, does not). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ...": the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

/** The environment of a fresh machine: none of payroute's keys set, unless given. */
function cleanEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^(HOST|ADMIN_PORT|PROXY_PORT|ADMIN_URL|PUBLIC_URL|DATA_DIR|DATABASE_URL|ENVIRONMENT|SECRETS_KEY|LOG_.*|PAYROUTE_.*)$/.test(
        key,
      )
    ) {
      delete env[key];
    }
  }
  return { ...env, ...extra };
}

async function stopAndCheck(t: import('ava').ExecutionContext, launcher: Launcher, urls: string[]): Promise<void> {
  const pids = childPids(launcher.lines);
  t.is(pids.length, 2, `both children logged their pid:\n${launcher.lines.join('\n')}`);
  launcher.child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_LIMIT_MS).unref());
  const result = await Promise.race([launcher.exited, timeout]);
  if (result === 'timeout') {
    launcher.child.kill('SIGKILL');
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    t.fail(`the launcher did not exit within ${STOP_LIMIT_MS} ms:\n${launcher.lines.join('\n')}`);
    return;
  }
  t.deepEqual(result, { code: 0, signal: null }, launcher.lines.join('\n'));
  for (const pid of pids) t.false(alive(pid), `child ${pid} exited`);
  for (const url of urls) {
    await t.throwsAsync(fetch(`${url}/healthz`), undefined, `${url} no longer listens`);
  }
}

test('npm start on a fresh machine: SQLite, both processes healthy, proxy forwards to admin, SIGTERM stops all', async (t) => {
  // A working directory of its own (no .env, nothing configured but the ports): DATA_DIR is the default ./data.
  const cwd = mkdtempSync(join(tmpdir(), 'payroute-start-'));
  const dataDir = join(cwd, 'data');
  const [adminPort, proxyPort] = [await freePort(), await freePort()];
  const launcher = launch(cwd, cleanEnv({ ADMIN_PORT: String(adminPort), PROXY_PORT: String(proxyPort) }));
  try {
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    await Promise.all([waitHealthy(adminUrl, launcher), waitHealthy(proxyUrl, launcher)]);
    t.deepEqual(await (await fetch(`${proxyUrl}/healthz`)).json(), { status: 'ok', service: 'proxy' });
    t.deepEqual(await (await fetch(`${adminUrl}/healthz`)).json(), { status: 'ok', service: 'admin' });

    // No set-up: the SQLite file and the generated secrets key are in DATA_DIR.
    t.true(existsSync(join(dataDir, 'payroute.sqlite')));
    t.true(existsSync(join(dataDir, 'secrets.key')));

    // An /api/v1 path the proxy does not serve is forwarded to the admin process, which refuses it without a key.
    const r = await fetch(`${proxyUrl}/api/v1/protocol/agents`, { headers: { 'x-correlation-id': 'start-test-1' } });
    t.is(r.status, 401);
    t.is(r.headers.get('x-correlation-id'), 'start-test-1');
    const body = (await r.json()) as Record<string, unknown>;
    t.is(body.code, 'BCK.AUTH.0001');
    t.is(body.httpStatus, 401);
    t.is(body.correlationId, 'start-test-1');
    t.regex(String(body.docsUrl), /#bckauth0001$/);

    // Logs are prefixed per process; stdout carries the readiness lines.
    t.true(
      launcher.lines.some((l) => l.startsWith('[admin] {"ready":"admin"')),
      launcher.lines.join('\n'),
    );
    t.true(launcher.lines.some((l) => l.startsWith('[proxy] {"ready":"proxy"')));

    await stopAndCheck(t, launcher, [adminUrl, proxyUrl]);
  } finally {
    if (launcher.child.exitCode === null) launcher.child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('settings come from ./.env (as .env.example says); relative paths mean the same files for all processes', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'payroute-start-env-'));
  const [adminPort, proxyPort] = [await freePort(), await freePort()];
  writeFileSync(
    join(cwd, '.env'),
    [
      '# a .env as a user writes it',
      `ADMIN_PORT=${adminPort}`,
      `PROXY_PORT=${proxyPort}`,
      'DATA_DIR=./state',
      'LOG_LEVEL=info',
      '',
    ].join('\n'),
  );
  const launcher = launch(cwd, cleanEnv({}));
  try {
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    await Promise.all([waitHealthy(adminUrl, launcher), waitHealthy(proxyUrl, launcher)]);
    // The launcher migrated ./state/payroute.sqlite and the admin process serves from the same file.
    t.true(existsSync(join(cwd, 'state', 'payroute.sqlite')));
    t.false(existsSync(join(ROOT, 'state')), 'nothing written relative to the repository');
    const r = await fetch(`${proxyUrl}/api/v1/protocol/agents`);
    t.is(r.status, 401);
    await stopAndCheck(t, launcher, [adminUrl, proxyUrl]);
  } finally {
    if (launcher.child.exitCode === null) launcher.child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('npm start: the reader of its output going away (a log collector restarted, `| head`) stops nothing', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'payroute-start-pipe-'));
  const [adminPort, proxyPort] = [await freePort(), await freePort()];
  const launcher = launch(cwd, cleanEnv({ ADMIN_PORT: String(adminPort), PROXY_PORT: String(proxyPort) }));
  try {
    // Like `| head -1`: the first readiness line is read, then the pipe is closed. The other one is written (and
    // relayed by the launcher) into a pipe nobody reads: EPIPE.
    const deadline = Date.now() + 120_000;
    while (!launcher.lines.some((l) => /^\[(admin|proxy)\] \{"ready"/.test(l)) && Date.now() < deadline) {
      if (launcher.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    launcher.child.stdout?.destroy();
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    // Both serve, so both readiness lines were written (a server writes it as it starts listening); the launcher
    // relays the second before its children are done stopping below, and it must not die of it.
    await Promise.all([waitHealthy(adminUrl, launcher), waitHealthy(proxyUrl, launcher)]);
    await stopAndCheck(t, launcher, [adminUrl, proxyUrl]);
  } finally {
    if (launcher.child.exitCode === null) launcher.child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('npm start: a process that exits on its own stops the other, and the launcher exits non-zero even for its code 0', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'payroute-start-child-'));
  const [adminPort, proxyPort] = [await freePort(), await freePort()];
  const launcher = launch(cwd, cleanEnv({ ADMIN_PORT: String(adminPort), PROXY_PORT: String(proxyPort) }));
  try {
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    await Promise.all([waitHealthy(adminUrl, launcher), waitHealthy(proxyUrl, launcher)]);
    const pids = childPids(launcher.lines);
    t.is(pids.length, 2, launcher.lines.join('\n'));
    // The admin process alone is stopped (it drains and exits 0): the service is down, which a process manager
    // that restarts on failure must see.
    const admin = pids.find((pid) =>
      launcher.lines.some((l) => l.startsWith('[admin] {') && l.includes(`"pid":${pid}`)),
    );
    t.not(admin, undefined);
    process.kill(admin ?? -1, 'SIGTERM');
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_LIMIT_MS).unref());
    t.deepEqual(await Promise.race([launcher.exited, timeout]), { code: 1, signal: null }, launcher.lines.join('\n'));
    t.true(launcher.lines.includes('[start] admin exited (0); stopping'), launcher.lines.join('\n'));
    for (const pid of pids) t.false(alive(pid), `child ${pid} exited`);
  } finally {
    if (launcher.child.exitCode === null) launcher.child.kill('SIGKILL');
    for (const pid of childPids(launcher.lines)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  }
});

/** Every process below `root` now (children, their children, ...), from `ps`. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const line of execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (pid === undefined || ppid === undefined || !Number.isInteger(pid)) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Polls until none of `pids` runs; the ones still running after `ms`. */
async function waitGone(pids: readonly number[], ms: number): Promise<number[]> {
  const until = Date.now() + ms;
  let running = pids.filter(alive);
  while (running.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    running = running.filter(alive);
  }
  return running;
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`npm start: ${signal} to the npm process (what a process manager signals) stops the launcher, admin and proxy`, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'payroute-npm-start-'));
    const [adminPort, proxyPort] = [await freePort(), await freePort()];
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: cleanEnv({
        DATA_DIR: dataDir,
        ADMIN_PORT: String(adminPort),
        PROXY_PORT: String(proxyPort),
      }) as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const launcher: Launcher = {
      child: npm,
      lines: [],
      exited: new Promise((resolve) => npm.on('exit', (code, sig) => resolve({ code, signal: sig }))),
    };
    for (const stream of [npm.stdout, npm.stderr]) {
      if (stream !== null) createInterface({ input: stream }).on('line', (l) => launcher.lines.push(l));
    }
    let tree: number[] = [];
    try {
      const adminUrl = `http://127.0.0.1:${adminPort}`;
      const proxyUrl = `http://127.0.0.1:${proxyPort}`;
      await Promise.all([waitHealthy(adminUrl, launcher), waitHealthy(proxyUrl, launcher)]);
      const log = () => launcher.lines.join('\n');
      t.true(
        launcher.lines.some((l) => l.startsWith('[admin] {"ready":"admin"')),
        log(),
      );
      t.true(
        launcher.lines.some((l) => l.startsWith('[proxy] {"ready":"proxy"')),
        log(),
      );
      tree = descendants(npm.pid ?? -1);
      const servers = childPids(launcher.lines);
      t.is(servers.length, 2, log());
      // The launcher and both servers are in npm's tree (whatever shell npm runs the script with).
      for (const pid of servers) t.true(tree.includes(pid), `server ${pid} is below npm (${tree.join(', ')})`);
      t.true(tree.length >= 3, `launcher, admin and proxy below npm: ${tree.join(', ')}`);

      npm.kill(signal);
      const running = await waitGone([npm.pid ?? -1, ...tree], STOP_LIMIT_MS);
      t.deepEqual(running, [], `still running after ${signal} to npm:\n${log()}`);
      t.false(await listening(adminPort), 'the admin port refuses connections');
      t.false(await listening(proxyPort), 'the proxy port refuses connections');
    } finally {
      for (const pid of [npm.pid ?? -1, ...tree]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
