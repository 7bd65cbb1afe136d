// What the kit's two commands (loadtest/run.ts, loadtest/serve-stack.ts) share around their work: the command line
// (usage on a bad one, exit 2), the exit (explicit: the stack's database handles and undici's pools may keep the
// event loop alive a while) and Ctrl-C (the first stops in order, the second kills every process started, at once).
import { UsageError } from './options.js';
import { killAll } from './processes.js';

/** Calls `stop` on the first SIGINT or SIGTERM; on the second, kills everything and exits 130. */
export function onInterrupt(name: string, stop: () => void): void {
  let seen = 0;
  const handler = (signal: NodeJS.Signals) => {
    seen += 1;
    if (seen > 1) {
      process.stderr.write(`\n${name}: ${signal} again, killing everything\n`);
      killAll('SIGKILL');
      process.exit(130);
    }
    process.stderr.write(`\n${name}: ${signal}, stopping (again to kill at once)\n`);
    stop();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/** Parses the command line (null: --help), runs `main` and exits with its status. */
export function runCommand<A>(
  name: string,
  usage: string,
  parse: (argv: string[]) => A | null,
  main: (args: A) => Promise<number>,
): void {
  let args: A | null;
  try {
    args = parse(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${name}: ${err.message}\n${usage}\n`);
    process.exit(2);
  }
  if (args === null) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  main(args).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${String(err instanceof Error ? err.stack : err)}\n`);
      killAll('SIGKILL');
      process.exit(1);
    },
  );
}
