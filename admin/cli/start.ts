// `npm start`: applies pending migrations, then runs the admin and proxy processes with prefixed logs.
// Ctrl-C or SIGTERM stops both, and so does the end of the process that started this one (npm); if either exits on
// its own, the other is stopped and this process exits non-zero (the child's code, or 1 for a code 0 or a signal):
// a process manager that restarts on failure must see that the service went down.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from '../../config/index.js';
import { surviveBrokenPipes } from '../../shared/broken-pipes.js';
import { createContextOrExit } from '../../shared/context.js';
import { createLogger, logFormatOf } from '../../shared/log.js';
import { whenParentGone } from '../../shared/shutdown.js';

// The children's lines are relayed to this process's stdout and stderr: their reader going away (a log collector
// restarted, `| head`) must not take the service down with it.
surviveBrokenPipes();
const config = loadConfigOrExit();
const log = createLogger(config, 'start');
// Refused here (exit 2, nothing started) when the secrets key does not open the data.
const ctx = await createContextOrExit(config, log, { migrate: true });
await ctx.db.close();

const root = fileURLToPath(new URL('../../', import.meta.url));
const children = new Map<string, ChildProcess>();
let stopping = false;

function prefix(stream: NodeJS.ReadableStream | null, out: NodeJS.WritableStream, name: string): void {
  if (stream === null) return;
  createInterface({ input: stream }).on('line', (line) => out.write(`[${name}] ${line}\n`));
}

// The children inherit this process's environment (which `npm start` already filled from .env with
// --env-file-if-exists) and its working directory, so relative DATA_DIR / sqlite: paths mean the same files for all
// three. They do not read .env themselves: that could only make them disagree with the migrations run above.
// The entry files are resolved from this file, so the working directory may be anywhere. They run the way this file
// runs: compiled JavaScript from dist/ (`npm start`, the image), or the TypeScript sources under tsx (`npm run dev`,
// the tests), which is the only case that resolves tsx (a devDependency, absent from a production install).
const fromSources = import.meta.url.endsWith('.ts');
const loader = fromSources ? ['--import', import.meta.resolve('tsx')] : [];
const extension = fromSources ? '.ts' : '.js';

function run(name: string, entry: string): void {
  const child = spawn(process.execPath, [...loader, join(root, `${entry}${extension}`)], {
    cwd: process.cwd(),
    // Their stderr is a pipe to this process: they log in the format this process's own terminal (or its
    // LOG_FORMAT) calls for, not JSON because of the pipe.
    env: { ...process.env, PAYROUTE_SKIP_MIGRATE: '1', LOG_FORMAT: logFormatOf(config) },
    // The IPC channel is how the children learn that this process is gone, even when it is killed outright
    // (shared/shutdown.ts): the kernel closes it, and they stop instead of running on under PID 1.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'json',
  });
  children.set(name, child);
  prefix(child.stdout, process.stdout, name);
  prefix(child.stderr, process.stderr, name);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`[start] ${name} exited (${signal ?? code}); stopping\n`);
      stop(code === null || code === 0 ? 1 : code);
    } else if (children.size === 0) {
      process.exit(process.exitCode ?? 0);
    }
  });
  // A child that could not be started at all (no 'exit' follows) is the same failure. Any other error of a child
  // (a signal it could no longer receive) changes nothing, and must not end this process as an unheard 'error'.
  child.on('error', (err) => {
    if (child.pid !== undefined) return;
    children.delete(name);
    process.stderr.write(`[start] ${name} could not be started (${err.message}); stopping\n`);
    if (!stopping) stop(1);
    else if (children.size === 0) process.exit(process.exitCode ?? 1);
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
// A process manager signals `npm start`'s npm process, which forwards the signal to its `sh -c` (unless the script
// execs this process, as package.json's does): the shell dies without forwarding it, and npm exits. Both leave
// this process re-parented, which whenParentGone notices; so does npm killed outright.
whenParentGone(() => {
  process.stderr.write('[start] parent process exited; stopping\n');
  stop(0);
});
run('admin', 'admin/server');
run('proxy', 'proxy/server');
