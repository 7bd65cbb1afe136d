// `npm run loadtest:stack`: the seeded stack and its counterparts of `npm run loadtest` (loadtest/world.ts, on the
// same fixed ports), kept up until Ctrl-C for k6. It prints the variables the k6 scripts read, as `export` lines, and
// a ready-made `k6 run` line per scenario; with the default ports BASE_URL, TARGET_URL and PAID_URL are already the
// scripts' defaults, so after the exports a bare `k6 run loadtest/k6/<scenario>.ts` works too.
import { onInterrupt, runCommand } from './cli.js';
import { type StackArgs, STACK_USAGE, parseStackArgs } from './options.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { type World, assertPortsFree, startWorld } from './world.js';

/** What each k6 script reads (beyond VUS and DURATION, which have defaults). */
const K6_VARIABLES: Record<Scenario, readonly string[]> = {
  relay: ['BASE_URL', 'API_KEY', 'DELEGATION_ID', 'TARGET_URL'],
  paid: ['BASE_URL', 'API_KEY', 'DELEGATION_ID', 'PAID_URL'],
  mint: ['BASE_URL', 'API_KEY', 'DELEGATION_ID', 'PAID_URL'],
  commerce: ['BASE_URL', 'TOKEN', 'PAID_URL'],
};

/** A value as one shell word: bare when it is plainly safe, single-quoted otherwise. */
const sh = (v: string): string => (/^[\w./:@%+=,-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/** The k6 scripts' environment for this world. */
export function k6Environment(w: World): Record<string, string> {
  const env: Record<string, string> = {
    BASE_URL: w.stack.proxyUrl,
    API_KEY: w.apiKey,
    DELEGATION_ID: w.delegationId,
    TARGET_URL: `${w.upstream.url}/free`,
    PAID_URL: `${w.merchant.url}/paid`,
  };
  if (w.commerce !== undefined) {
    env.TOKEN = w.commerce.token;
    env.CLIENT_ID = w.commerce.clientId;
    env.REDIRECT_URI = w.commerce.redirectUri;
  }
  return env;
}

export function stackInstructions(w: World, db: StackArgs['db']): string {
  const env = k6Environment(w);
  const lines = [
    `# payroute load-test stack on ${db}: proxy ${w.stack.proxyUrl}, admin ${w.stack.adminUrl}, ` +
      `upstream ${w.upstream.url}, merchant ${w.merchant.url}`,
    '# The k6 scripts read these (TOKEN lives a day; without it commerce.ts gets one with API_KEY and CLIENT_ID):',
    ...Object.entries(env).map(([k, v]) => `export ${k}=${sh(v)}`),
    '',
    '# One run per scenario; each exits non-zero when a check or a request failed:',
    ...SCENARIOS.map(
      (s) => `k6 run ${K6_VARIABLES[s].map((k) => `-e ${k}=${sh(env[k] ?? '')}`).join(' ')} loadtest/k6/${s}.ts`,
    ),
    '',
    '# Ctrl-C stops the stack and its counterparts and drops the database.',
  ];
  return `${lines.join('\n')}\n`;
}

async function main(args: StackArgs): Promise<number> {
  let interrupted = false;
  let wake: (() => void) | undefined;
  onInterrupt('loadtest:stack', () => {
    interrupted = true;
    wake?.();
  });
  let world: World | undefined;
  try {
    await assertPortsFree(args.ports);
    process.stderr.write(`loadtest:stack: starting the stack (${args.db}) and its counterparts\n`);
    world = await startWorld({ db: args.db, ports: args.ports, commerce: true });
    if (!interrupted) {
      process.stdout.write(stackInstructions(world, args.db));
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    return 0;
  } catch (err) {
    process.stderr.write(`loadtest:stack failed: ${String(err instanceof Error ? err.message : err)}\n`);
    return interrupted ? 130 : 1;
  } finally {
    await world?.stop();
  }
}

runCommand('loadtest:stack', STACK_USAGE, parseStackArgs, main);
