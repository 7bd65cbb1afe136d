// Runs ava with its default reporter and prints the plain closing line CI reads:
// `N passed, N failed, N skipped`, after the slowest test files.
// The default reporter, not TAP: on a timeout ava's TAP reporter (8.0.1) throws while writing the pending tests and
// so never names them, while the default one lists each pending test, which is the one fact a hang needs.
// Each result is one line at a two-space indent (a t.log line is indented further, so it never counts):
//   ✔ file › title        passed
//   ✘ [fail]: file › …    failed (an assertion or a hook); any other ✘ line but the timeout banner is a crash
//   - [skip] / - [todo]   skipped
//   ◌ file › title        still pending when ava timed out or was interrupted: counted as failed
//
// A watchdog stands behind ava's own timeout: when no result has come for WATCHDOG_MS, it interrupts ava (SIGINT:
// ava then names every pending test and exits), and kills the whole tree if that does not end it. ava's timeout
// alone is not enough: a test that sets t.timeout(n) makes ava ignore its global timeout for n, whatever the other
// workers do, and a run once hung 25 minutes that way.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Longer than ava's own timeout (ava.config.js: 10 minutes without a result), which should fire first. */
const WATCHDOG_MS = Number(process.env.TEST_WATCHDOG_MS ?? 12 * 60_000);
/** After the interrupt, how long ava may take to report the pending tests and stop its workers. */
const INTERRUPT_GRACE_MS = 60_000;
const SLOWEST_SHOWN = 12;

const root = fileURLToPath(new URL('../../', import.meta.url));
const timings = mkdtempSync(join(tmpdir(), 'payroute-test-timings-'));
const started = Date.now();
// ava's command (its package exports no path to it); the same file `npx ava` runs.
const avaCli = join(root, 'node_modules', 'ava', 'entrypoints', 'cli.js');
// Its own process group (detached), so the watchdog can end ava, its workers and what they started (servers,
// Chromium) at once; this process forwards Ctrl-C to it.
const child = spawn(process.execPath, [avaCli, ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, FORCE_COLOR: '0', PAYROUTE_TEST_TIMINGS: timings },
  detached: true,
});
let passed = 0;
let failed = 0;
let skipped = 0;

function count(line: string): void {
  if (line.startsWith('  ✔ ')) passed += 1;
  else if (line.startsWith('  ◌ ')) failed += 1;
  else if (line.startsWith('  ✘ ') && !line.startsWith('  ✘ Timed out')) failed += 1;
  else if (line.startsWith('  - [skip] ') || line.startsWith('  - [todo] ')) skipped += 1;
}

const signalGroup = (signal: NodeJS.Signals): void => {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
};

let watchdog: NodeJS.Timeout | undefined;
let killer: NodeJS.Timeout | undefined;
let interrupted = false;
const arm = (): void => {
  clearTimeout(watchdog);
  watchdog = setTimeout(() => {
    interrupted = true;
    process.stdout.write(
      `\nno test result for ${Math.round(WATCHDOG_MS / 1000)} s: interrupting ava, which names the tests still pending\n`,
    );
    if (child.pid !== undefined) process.kill(child.pid, 'SIGINT');
    killer = setTimeout(() => {
      process.stdout.write('ava did not stop after the interrupt: killing the test processes\n');
      signalGroup('SIGKILL');
    }, INTERRUPT_GRACE_MS);
  }, WATCHDOG_MS);
};
arm();
process.on('SIGINT', () => signalGroup('SIGINT'));
process.on('SIGTERM', () => signalGroup('SIGTERM'));

if (child.stdout === null || child.stderr === null) throw new Error('no output streams');
createInterface({ input: child.stdout }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  const before = passed + failed + skipped;
  count(line);
  if (!interrupted && passed + failed + skipped !== before) arm();
});
createInterface({ input: child.stderr }).on('line', (line) => {
  process.stderr.write(`${line}\n`);
});

/** The test files by how long each worker lived (set-up and clean-up included), slowest first. */
function slowestFiles(): string {
  const rows: { file: string; ms: number }[] = [];
  for (const name of readdirSync(timings)) {
    for (const line of readFileSync(join(timings, name), 'utf8').split('\n')) {
      if (line === '') continue;
      const { file, ms } = JSON.parse(line) as { file: string; ms: number };
      rows.push({ file: relative(root, file.startsWith('file:') ? fileURLToPath(file) : file), ms });
    }
  }
  rows.sort((a, b) => b.ms - a.ms);
  const shown = rows.slice(0, SLOWEST_SHOWN).map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.file}`);
  const total = ((Date.now() - started) / 60_000).toFixed(1);
  return `\nslowest test files (of ${rows.length}; the whole run took ${total} min):\n${shown.join('\n')}\n`;
}

let finished = false;
const finish = (code: number | null): void => {
  if (finished) return;
  finished = true;
  clearTimeout(watchdog);
  clearTimeout(killer);
  const exitCode = code ?? 1;
  if (exitCode !== 0 && failed === 0) failed += 1; // ava failed outside a test (e.g. a crashed worker, the watchdog)
  // Whatever a killed worker left running in the group (a server, a browser) goes with the run.
  if (interrupted) signalGroup('SIGKILL');
  try {
    process.stdout.write(slowestFiles());
  } finally {
    rmSync(timings, { recursive: true, force: true });
  }
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exit(exitCode);
};
// 'close', not 'exit': it comes after the last line of output has been read. A process ava left behind that still
// holds its output open would keep 'close' from coming: shortly after ava exited, the run ends anyway.
child.on('close', finish);
child.on('exit', (code) => setTimeout(() => finish(code), 30_000).unref());
