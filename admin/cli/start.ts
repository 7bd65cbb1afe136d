// `npm start`: applies pending migrations, then runs the admin and proxy processes with prefixed logs.
// Ctrl-C or SIGTERM stops both; if either exits, the other is stopped and the exit code is passed on.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from '../../config/index.js';
import { createContext } from '../../shared/context.js';
import { createLogger } from '../../shared/log.js';

const config = loadConfigOrExit();
const log = createLogger(config, 'start');
const ctx = await createContext(config, log, { migrate: true });
await ctx.db.close();

const root = fileURLToPath(new URL('../../', import.meta.url));
const children = new Map<string, ChildProcess>();
let stopping = false;

function prefix(stream: NodeJS.ReadableStream | null, out: NodeJS.WritableStream, name: string): void {
  if (stream === null) return;
  createInterface({ input: stream }).on('line', (line) => out.write(`[${name}] ${line}\n`));
}

function run(name: string, entry: string): void {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { ...process.env, PAYROUTE_SKIP_MIGRATE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(name, child);
  prefix(child.stdout, process.stdout, name);
  prefix(child.stderr, process.stderr, name);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`[start] ${name} exited (${signal ?? code}); stopping\n`);
      stop(code ?? 1);
    } else if (children.size === 0) {
      process.exit(process.exitCode ?? 0);
    }
  });
}

function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children.values()) child.kill('SIGTERM');
  if (children.size === 0) process.exit(code);
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(code || 1);
  }, 12_000).unref();
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
run('admin', 'admin/server.ts');
run('proxy', 'proxy/server.ts');
