// npm test's runner (test/support/run-tests.ts) on a run that hangs: a test that set t.timeout() far above ava's
// own timeout, which makes ava ignore its timeout, then waits for ever. The runner's watchdog must interrupt ava,
// which names the pending test; the run ends by itself, fails, counts the hung test as failed, and still prints the
// slowest files and the closing line CI reads. (A run once hung 25 minutes this way, and ended only by SIGINT.)
import test from 'ava';
import { runEntry } from '../support/cli.js';

test('a hang ava does not catch is ended by the watchdog, which names the pending test', async (t) => {
  const out = await runEntry('test/support/run-tests.ts', ['--config', 'test/fixtures/watchdog/ava.config.js'], {
    // Long enough for ava to start and pass the first test on a loaded machine; idle time, not CPU.
    TEST_WATCHDOG_MS: '45000',
  });
  t.not(out.code, 0, out.stdout);
  t.regex(out.stdout, /no test result for 45 s: interrupting ava/);
  t.regex(out.stdout, /◌ hangs for good behind a long t\.timeout/);
  t.regex(out.stdout, /✔ passes/);
  t.regex(out.stdout, /slowest test files \(of \d+;/);
  const lines = out.stdout.trimEnd().split('\n');
  // The pending test and ava's interrupt line count as failures; the passing test as passed.
  t.is(lines.at(-1), '1 passed, 2 failed, 0 skipped');
});
