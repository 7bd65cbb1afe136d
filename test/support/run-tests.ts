// Runs ava with its default reporter and prints the plain closing line CI reads:
// `N passed, N failed, N skipped`.
// The default reporter, not TAP: on a timeout ava's TAP reporter (8.0.1) throws while writing the pending tests and
// so never names them, while the default one lists each pending test, which is the one fact a hang needs.
// Each result is one line at a two-space indent (a t.log line is indented further, so it never counts):
//   ✔ file › title        passed
//   ✘ [fail]: file › …    failed (an assertion or a hook); any other ✘ line but the timeout banner is a crash
//   - [skip] / - [todo]   skipped
//   ◌ file › title        still pending when ava timed out: counted as failed
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const args = ['ava', ...process.argv.slice(2)];
const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
let passed = 0;
let failed = 0;
let skipped = 0;

function count(line: string): void {
  if (line.startsWith('  ✔ ')) passed += 1;
  else if (line.startsWith('  ◌ ')) failed += 1;
  else if (line.startsWith('  ✘ ') && !line.startsWith('  ✘ Timed out')) failed += 1;
  else if (line.startsWith('  - [skip] ') || line.startsWith('  - [todo] ')) skipped += 1;
}

if (child.stdout === null || child.stderr === null) throw new Error('no output streams');
createInterface({ input: child.stdout }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  count(line);
});
createInterface({ input: child.stderr }).on('line', (line) => {
  process.stderr.write(`${line}\n`);
});
// 'close', not 'exit': it comes after the last line of output has been read.
child.on('close', (code) => {
  const exitCode = code ?? 1;
  if (exitCode !== 0 && failed === 0) failed += 1; // ava failed outside a test (e.g. a crashed worker)
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exit(exitCode);
});
