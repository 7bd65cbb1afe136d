// `npm run cli -- --help` and `npm run cli -- <command> --help`: usage text on stdout, exit 0, for every command,
// before any configuration is read or database opened (here the configuration is invalid and no database exists).
// The image's entry point answers --help too. Real processes, as the operator runs them.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { COMMAND_HELP } from '../../admin/cli/usage.js';
import { runEntry } from '../support/cli.js';

// Invalid on purpose: help must not depend on it.
const env = (dataDir: string): Record<string, string> => ({
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  ENVIRONMENT: 'staging',
  LOG_LEVEL: 'warn',
});

/** Runs `cli.ts args...` in a fresh DATA_DIR and checks that nothing was written to it. */
async function cli(args: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-cli-help-'));
  try {
    const out = await runEntry('admin/cli/cli.ts', args, env(dataDir));
    return { ...out, wroteData: existsSync(dataDir) && readdirSync(dataDir).length > 0 };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The synopsis lines as printed after a prefix: continuation lines keep their place under the first. */
const shown = (prefix: string, synopsis: string) =>
  `${prefix}${synopsis.replaceAll('\n', `\n${' '.repeat(prefix.length)}`)}`;

test('--help and -h: every command, the output rules, exit 0, no configuration read', async (t) => {
  for (const flag of ['--help', '-h']) {
    const r = await cli([flag]);
    t.is(r.code, 0, r.stderr);
    t.true(r.stdout.startsWith('usage: npm run cli -- <command>\n'), r.stdout);
    for (const { synopsis } of Object.values(COMMAND_HELP)) t.true(r.stdout.includes(shown('  ', synopsis)), synopsis);
    t.regex(r.stdout, /prints exactly one JSON object on stdout/);
    t.regex(r.stdout, /`<command> --help` describes one command\.\n$/);
    t.false(r.wroteData, 'no database was created');
  }
});

// One process per command, one at a time: each loads the whole CLI.
for (const [name, help] of Object.entries(COMMAND_HELP)) {
  test.serial(`${name} --help: its usage and what it prints, exit 0`, async (t) => {
    const r = await cli([...name.split(' '), '--help']);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, `${shown('usage: npm run cli -- ', help.synopsis)}\n\n${help.summary}\n`);
    t.false(r.wroteData, 'no database was created');
  });
}

test('help after a command and its arguments (a client id, options) is still that command help', async (t) => {
  const update = await cli(['oauth-clients', 'update', 'some-client-id', '--name', 'N', '--help']);
  t.is(update.code, 0, update.stderr);
  t.true(update.stdout.startsWith('usage: npm run cli -- oauth-clients update CLIENT_ID'), update.stdout);
  const faucet = await cli(['faucet', '--amount', '5', '-h']);
  t.is(faucet.code, 0, faucet.stderr);
  t.true(faucet.stdout.startsWith('usage: npm run cli -- faucet --address'), faucet.stdout);
});

test('a group word with --help lists that group commands', async (t) => {
  const r = await cli(['oauth-clients', '--help']);
  t.is(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('  npm run cli -- '));
  t.deepEqual(
    lines.map((l) => l.split(' ').slice(6, 8).join(' ')),
    ['oauth-clients create', 'oauth-clients list', 'oauth-clients update', 'oauth-clients disable'],
  );
});

test('--help after words that name no command: the usage error, exit 2', async (t) => {
  for (const args of [
    ['nope', '--help'],
    ['users', 'delete', '--help'],
  ]) {
    const r = await cli(args);
    t.is(r.code, 2, args.join(' '));
    const body = JSON.parse(r.stdout) as { error: string; usage: string };
    t.is(body.error, 'BCK.HTTP.0400');
    t.true(body.usage.startsWith('usage: npm run cli -- <command>'));
  }
});

test('the image entry point: --help lists the roles and exits 0; an unknown role exits 2', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-container-help-'));
  try {
    const help = await runEntry('admin/cli/container.ts', ['--help'], env(dataDir));
    t.is(help.code, 0, help.stderr);
    t.regex(help.stdout, /^usage: <image> <role> \[arguments\]\n/);
    for (const role of ['admin', 'proxy', 'migrate [status | down --yes]', 'cli <command> [options]']) {
      t.true(help.stdout.includes(`\n  ${role} `), role);
    }
    const cliHelp = await runEntry('admin/cli/container.ts', ['cli', '--help'], env(dataDir));
    t.is(cliHelp.code, 0, cliHelp.stderr);
    t.true(cliHelp.stdout.startsWith('usage: npm run cli -- <command>\n'));
    const unknown = await runEntry('admin/cli/container.ts', ['nope'], env(dataDir));
    t.is(unknown.code, 2);
    t.regex(unknown.stderr, /unknown role "nope"/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
