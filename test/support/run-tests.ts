// Runs ava with TAP and prints the plain closing line CI reads: `N passed, N failed, N skipped`.
// ava's own TAP footer counts test.todo as failed, so lines are counted here.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const args = ['ava', '--tap', ...process.argv.slice(2)];
const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
let passed = 0;
let failed = 0;
let skipped = 0;
if (child.stdout === null) throw new Error('no stdout');
createInterface({ input: child.stdout }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  if (/^not ok \d+/.test(line)) {
    if (/# (TODO|SKIP)/i.test(line)) skipped += 1;
    else failed += 1;
  } else if (/^ok \d+/.test(line)) {
    if (/# (SKIP|TODO)/i.test(line)) skipped += 1;
    else passed += 1;
  }
});
child.on('exit', (code) => {
  const exitCode = code ?? 1;
  if (exitCode !== 0 && failed === 0) failed += 1; // ava failed outside a test (e.g. a crashed worker)
  process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  process.exit(exitCode);
});
