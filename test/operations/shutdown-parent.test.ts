// A server whose parent has gone stops and exits (shared/shutdown.ts), even when that parent (the `npm start`
// launcher) was killed outright: while the server was still starting, and leaving no reader of its stderr.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { alive, until, within } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = ['--import', 'tsx', 'test/support/shutdown-child.ts'];

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, LOG_FILE: '', LOG_LEVEL: 'info', ...extra };
}

// pino's asynchronous destination writes what it holds at process.exit, and retried the failing write for ever
// (EPIPE): the process hung in its exit, an orphan.
for (const format of ['json', 'pretty']) {
  test(`LOG_FORMAT=${format}: stopped after the reader of its stderr went away, a process logs its way out and exits 0`, async (t) => {
    const child = spawn(process.execPath, CHILD, {
      cwd: ROOT,
      env: env({ LOG_FORMAT: format }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    if (child.stdout === null || child.stderr === null) throw new Error('no pipes');
    const lines = createInterface({ input: child.stdout });
    await within('the child ready', new Promise<void>((r) => lines.on('line', (l) => l === 'ready' && r())), 60_000);
    child.stderr.destroy();
    child.kill('SIGTERM');
    const result = await within('the child exiting', exited, 30_000).catch((err: unknown) => err);
    t.deepEqual(result, { code: 0, signal: null });
  });
}

// Its IPC channel closed, and it was re-parented, before it started watching for either.
test('a server whose launcher is killed outright while it is starting stops once started', async (t) => {
  // The launcher: spawns the server with an IPC channel, as admin/cli/start.ts does, and its stdout to ours.
  const launcher = spawn(
    process.execPath,
    [
      '-e',
      `require('node:child_process').spawn(process.execPath, ${JSON.stringify(CHILD)}, { stdio: ['ignore', 'inherit', 'ignore', 'ipc'] }); setInterval(() => {}, 60000);`,
    ],
    {
      cwd: ROOT,
      env: env({ LOG_FORMAT: 'json', SHUTDOWN_CHILD_STARTING_MS: '3000' }),
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  let server = -1;
  t.teardown(() => {
    launcher.kill('SIGKILL');
    if (alive(server)) process.kill(server, 'SIGKILL');
  });
  if (launcher.stdout === null) throw new Error('no pipe');
  const lines: string[] = [];
  createInterface({ input: launcher.stdout }).on('line', (l) => lines.push(l));
  await until('the server started', () => lines.some((l) => l.startsWith('started ')), 60_000, 20);
  server = Number(lines.find((l) => l.startsWith('started '))?.split(' ')[1]);
  launcher.kill('SIGKILL');
  await until('the server ready', () => lines.includes('ready') || !alive(server), 60_000, 20);
  await until('the server gone', () => !alive(server), 30_000).catch(() => {});
  t.false(alive(server), `server ${server} still runs without its launcher:\n${lines.join('\n')}`);
  // Stopped, not crashed (its channel was gone when it looked for it): its clean-up ran.
  await until('the last line read', () => lines.includes('stopped'), 10_000).catch(() => {});
  t.deepEqual(lines.slice(-2), ['ready', 'stopped']);
});
