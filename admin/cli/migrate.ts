// `npm run db:migrate [-- up | status | down --yes]`: the schema of DATABASE_URL. Like the operator CLI, it prints
// exactly one JSON object on stdout (usage text for --help) and exits 0 done, 1 refused, 2 bad command line.
import { parseArgs } from 'node:util';
import { type Config, loadConfigOrExit } from '../../config/index.js';
import { type Db, migrate, openDb } from '../../shared/db/orm.js';
import { migrationStatus, revertLast } from './migrations.js';

const SUBCOMMANDS = {
  up: {
    synopsis: 'up',
    line: 'apply every pending migration (the default)',
    summary: 'Applies every pending migration (the default). Prints { database, applied: [name] }.',
  },
  status: {
    synopsis: 'status',
    line: 'list the applied migrations and the pending ones',
    summary:
      'Changes nothing. Prints { database, applied: [{ name, executedAt }], pending: [name] }, each list in the\n' +
      'order the migrations run.',
  },
  down: {
    synopsis: 'down --yes',
    line: 'revert the last applied migration (refused without --yes)',
    summary:
      'Reverts the last applied migration with its down(), in one transaction: what it added goes, data included,\n' +
      'so it is refused without --yes. Prints { database, reverted: [name] } ([] when none is applied); a migration\n' +
      'that cannot be reverted is refused (exit 1) and stays applied. Stop the admin and proxy processes first.',
  },
} as const;
type Subcommand = keyof typeof SUBCOMMANDS;

const USAGE = [
  'usage: npm run db:migrate -- [<command>]   (in the image: migrate [<command>])',
  ...Object.values(SUBCOMMANDS).map((s) => `  ${s.synopsis.padEnd(12)}${s.line}`),
].join('\n');

function print(obj: object): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

function usageError(message: string): number {
  print({ error: 'BCK.HTTP.0400', message, usage: USAGE });
  return 2;
}

const isSubcommand = (word: string): word is Subcommand => Object.hasOwn(SUBCOMMANDS, word);

async function run(command: Subcommand, yes: boolean, config: Config, db: Db): Promise<number> {
  const database = config.database.kind;
  if (command === 'up') {
    print({ database, applied: await migrate(db) });
    return 0;
  }
  if (command === 'status') {
    print({ database, ...(await migrationStatus(db)) });
    return 0;
  }
  if (!yes) {
    const last = (await migrationStatus(db)).applied.at(-1);
    print({
      error: 'BCK.HTTP.0400',
      message:
        last === undefined
          ? 'no migration is applied; down needs --yes all the same'
          : `down reverts ${last.name}, dropping what it added, data included: run it again with --yes to confirm`,
    });
    return 1;
  }
  const result = await revertLast(db);
  if (result.kind === 'failed') {
    print({
      error: 'BCK.HTTP.0400',
      message: `${result.name} was not reverted (${result.reason}); it is still applied`,
    });
    return 1;
  }
  print({ database, reverted: result.kind === 'reverted' ? [result.name] : [] });
  return 0;
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse();
  } catch (err) {
    return usageError(err instanceof Error ? err.message : 'invalid arguments');
  }
  const { positionals, values } = args;
  const [word = 'up', ...rest] = positionals;
  if (!isSubcommand(word) || rest.length > 0) return usageError(`unknown command "${positionals.join(' ')}"`);
  if (values.help === true) {
    const help =
      positionals.length === 0
        ? `${USAGE}\n\n<command> --help describes one command.\n`
        : `usage: npm run db:migrate -- ${SUBCOMMANDS[word].synopsis}\n\n${SUBCOMMANDS[word].summary}\n`;
    process.stdout.write(help);
    return 0;
  }
  if (values.yes === true && word !== 'down') return usageError('--yes only confirms down');
  const config = loadConfigOrExit();
  const db = await openDb(config.database);
  try {
    return await run(word, values.yes === true, config, db);
  } finally {
    await db.close();
  }
}

function parse() {
  return parseArgs({
    allowPositionals: true,
    strict: true,
    options: { yes: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    print({ error: 'BCK.HTTP.0500', message: err instanceof Error ? err.message.split('\n')[0] : 'unexpected error' });
    process.exit(1);
  },
);
