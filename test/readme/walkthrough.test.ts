// README.md stays true: every ```sh block (test/support/readme/blocks.ts says which) runs in README order in one bash
// session, against a service started as `npm start` starts it (from dist/, SQLite, a fresh DATA_DIR) and the demo
// merchants, and must exit cleanly, leave the variables it assigns non-empty and not "null", and print every answer
// its comments show. One test per block, named by its README line; a failing block does not stop the later ones.
// Every wait is bounded, and nothing here measures time.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { ConfigSchema } from '../../config/index.js';
import { freePort } from '../support/ports.js';
import { childrenOf } from '../support/processes.js';
import {
  type Block,
  type Origins,
  assignedVariables,
  localize,
  runnableBlocks,
  unsafeCommands,
} from '../support/readme/blocks.js';
import { answerProblems, expectations } from '../support/readme/shapes.js';
import { type BlockRun, Shell } from '../support/readme/shell.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = import.meta.resolve('tsx');
/** Fewer runnable blocks than this means the extraction broke, not that the README shrank. */
const MIN_BLOCKS = 10;
const BLOCK_LIMIT_MS = 120_000;
/** Bounds a start that fails: a busy 2-core machine starts the service in well under this. */
const START_LIMIT_MS = 180_000;
const STOP_LIMIT_MS = 60_000;

interface Launched {
  name: string;
  child: ChildProcess;
  /** The last lines it printed (stdout and stderr), for messages. */
  lines: string[];
}

function launch(name: string, args: string[], env: Record<string, string>): Launched {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (lines.length > 400) lines.shift();
    });
  }
  return { name, child, lines };
}

const tail = (p: Launched, n = 40) => p.lines.slice(-n).join('\n');
const ended = (p: Launched) => p.child.exitCode !== null || p.child.signalCode !== null;

/** Polls `ready` until it holds; throws naming `what` if `p` exits first or START_LIMIT_MS passes. */
async function waitFor(what: string, p: Launched, ready: () => boolean | Promise<boolean>): Promise<void> {
  const until = Date.now() + START_LIMIT_MS;
  while (Date.now() < until) {
    if (await ready()) return;
    if (ended(p)) {
      // Its last lines may still be in the pipe: they say why it exited.
      await new Promise((r) => setTimeout(r, 1000));
      throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}) before ${what}:\n${tail(p)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${what} within ${START_LIMIT_MS} ms:\n${tail(p)}`);
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) })).status === 200;
  } catch {
    return false;
  }
}

/** SIGTERM and wait; past STOP_LIMIT_MS, SIGKILL it and what it started (npm start's admin and proxy). */
async function stop(p: Launched | undefined): Promise<void> {
  if (p === undefined || ended(p)) return;
  const exited = new Promise((resolve) => p.child.once('exit', resolve));
  const below = (pid: number): number[] => {
    try {
      return childrenOf(pid).flatMap((c) => [c, ...below(c)]);
    } catch {
      return [];
    }
  };
  const started = p.child.pid === undefined ? [] : below(p.child.pid);
  p.child.kill('SIGTERM');
  const late = new Promise((r) => setTimeout(() => r('late'), STOP_LIMIT_MS).unref());
  if ((await Promise.race([exited, late])) !== 'late') return;
  for (const pid of [p.child.pid ?? -1, ...started]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/**
 * The reader's shell: the service's environment (DATA_DIR, so the CLI opens the same database) without the switch
 * the README sets only on the service, so a CLI command that needs it must say so as the README shows it.
 */
const shellEnv = (env: Record<string, string>): Record<string, string> => ({
  ...env,
  ROUTER_ALLOW_PRIVATE_TARGETS: '',
});

/**
 * The environment of a fresh machine, shared by the service, the demo merchants and the shell (so `npm run -s cli`
 * in a block reaches the same DATA_DIR and generated secrets key as the service).
 */
function freshEnv(overrides: Record<string, string>): Record<string, string> {
  const keys = Object.keys(ConfigSchema.shape);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !keys.includes(key) && !/^(PAYROUTE_|DEMO_)/.test(key)) env[key] = value;
  }
  // Every configuration key set, but empty: config/index.ts reads an empty value as unset, and node's --env-file
  // never overrides a variable that is set, so a developer's ./.env cannot leak in (DATABASE_URL, SECRETS_KEY, ...).
  for (const key of keys) env[key] = '';
  return { ...env, ...overrides };
}

let readmeError: string | undefined;
let blocks: Block[] = [];
try {
  blocks = runnableBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  if (blocks.length < MIN_BLOCKS) {
    readmeError = `only ${blocks.length} runnable blocks (at least ${MIN_BLOCKS} expected): has the extraction broken?`;
  }
} catch (e) {
  readmeError = (e as Error).message;
}

let env: Record<string, string> = {};
let origins: Origins | undefined;
let dataDir: string | undefined;
let service: Launched | undefined;
let demo: Launched | undefined;
let shell: Shell | undefined;

if (readmeError !== undefined) {
  test('README.md: its runnable ```sh blocks can be read', (t) => {
    t.fail(`README.md: ${readmeError}`);
  });
} else {
  test.before(async () => {
    if (!existsSync(join(ROOT, 'dist/admin/cli/start.js'))) {
      throw new Error(
        'dist/admin/cli/start.js is missing: build first (npm run build; npm test builds before testing)',
      );
    }
    if (!existsSync(join(ROOT, 'demo/merchants.ts'))) {
      throw new Error(
        'demo/merchants.ts does not exist: the README walkthrough runs against the demo merchants ' +
          '(node --import tsx demo/merchants.ts, listening on DEMO_PORT and printing "demo merchants ready")',
      );
    }
    dataDir = mkdtempSync(join(tmpdir(), 'payroute-readme-'));
    origins = { service: await freePort(), admin: await freePort(), demo: await freePort() };
    env = freshEnv({
      DATA_DIR: dataDir,
      ADMIN_PORT: String(origins.admin),
      PROXY_PORT: String(origins.service),
      // As the README tells a reader to start it for the demo merchants, which listen on 127.0.0.1.
      ROUTER_ALLOW_PRIVATE_TARGETS: 'true',
    });
    service = launch('the service', ['--env-file-if-exists=.env', 'dist/admin/cli/start.js'], env);
    const { admin, service: proxy } = origins;
    await waitFor('GET /healthz 200 on both ports', service, async () => (await healthy(proxy)) && healthy(admin));
    const started = launch('the demo merchants', ['--import', TSX, 'demo/merchants.ts'], {
      ...env,
      DEMO_PORT: String(origins.demo),
    });
    demo = started;
    await waitFor('"demo merchants ready" on its output', started, () =>
      started.lines.some((l) => l.includes('demo merchants ready')),
    );
    shell = new Shell(ROOT, shellEnv(env));
  });

  test.after.always(async () => {
    await shell?.close();
    await Promise.all([stop(demo), stop(service)]);
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  for (const block of blocks) {
    test.serial(`README line ${block.line}`, async (t) => {
      if (shell === undefined || origins === undefined) return t.fail('the service and the shell did not start');
      if (!shell.alive) {
        await shell.close();
        shell = new Shell(ROOT, shellEnv(env));
        t.log('a new shell session: the previous one ended, so the variables of earlier blocks are gone');
      }
      const text = localize(block.text, origins);
      // Never run: it would change the checkout (npm ci replaced node_modules once), start a second service or run
      // the tests from inside a test.
      const unsafe = unsafeCommands(text, block.line);
      if (unsafe.length > 0) {
        return t.fail(
          `README line ${block.line}: not run, since the test runs blocks in the checkout:\n` +
            `${unsafe.map((u) => `- ${u}`).join('\n')}\nMark the block <!-- not run: <reason> --> (or change it).`,
        );
      }
      const names = assignedVariables(text);
      const run = await shell.run(text, names, BLOCK_LIMIT_MS);
      const problems = [
        ...exitProblems(run, text, block.line),
        ...variableProblems(run),
        ...answerProblems(expectations(text, block.line), run.stdout),
      ];
      if (problems.length === 0) return t.pass();
      t.fail(report(block.line, text, run, problems));
    });
  }
}

function exitProblems(run: BlockRun, text: string, first: number): string[] {
  if (run.ended !== undefined) return [`the block ${run.ended}`];
  const lines = text.split('\n');
  const problems = run.failed.map(({ status, command }) => {
    // bash re-renders the command (redirections, spacing): its first word-run names the line when it can.
    const head = command.split('\n')[0]?.trim().slice(0, 40) ?? '';
    const at = lines.findIndex((l) => head !== '' && l.includes(head));
    // Of a pipeline, bash names the last command, whichever stage failed (pipefail).
    return `${at < 0 ? 'a command' : `README line ${first + at}`} failed with status ${status}: ${command}`;
  });
  if (run.status !== 0) problems.push(`the block's last command exited ${run.status}`);
  return problems;
}

function variableProblems(run: BlockRun): string[] {
  return Object.entries(run.variables).flatMap(([name, value]) => {
    if (value === '') return [`${name} is empty after the block`];
    if (value === 'null') return [`${name} is "null" after the block (jq -r of a field an error answer lacks?)`];
    return [];
  });
}

function clip(text: string, max = 4000): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max / 2)}\n[... ${text.length - max} chars ...]\n${text.slice(-max / 2)}`;
}

function report(first: number, text: string, run: BlockRun, problems: string[]): string {
  const numbered = text
    .split('\n')
    .map((l, i) => `${String(first + i).padStart(5)}  ${l}`)
    .join('\n');
  const down = [service, demo].filter((p) => p !== undefined && ended(p)).map((p) => `${p?.name} has exited`);
  return [
    `README line ${first}: ${problems.length} problem(s)`,
    ...[...down, ...problems].map((p) => `- ${p}`),
    '--- the block as run (test ports) ---',
    numbered,
    '--- stdout ---',
    clip(run.stdout),
    '--- stderr ---',
    clip(run.stderr),
    '--- the service, last lines ---',
    service === undefined ? '' : tail(service, 10),
  ].join('\n');
}
