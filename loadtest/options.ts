// The command lines of `npm run loadtest -- <scenario>` and `npm run loadtest:stack`: flags first, then LOADTEST_*
// environment variables, then the defaults (the fixed ports the k6 scripts assume).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { SCENARIOS } from './scenarios.js';
import { DEFAULT_PORTS } from './world.js';

const DEFAULT_OUT = join(fileURLToPath(new URL('./', import.meta.url)), 'results');

/** 0: a free port, chosen when the process starts. */
const port = z.coerce.number().int().min(0).max(65_535);

const StackArgsSchema = z.object({
  db: z.enum(['sqlite', 'postgresql']),
  ports: z.object({ proxy: port, admin: port, upstream: port, merchant: port }),
});

const RunArgsSchema = StackArgsSchema.extend({
  scenario: z.enum(SCENARIOS),
  /** Seconds of load. The loop stops by itself; an hour is the most a run may ask. */
  duration: z.coerce.number().int().min(1).max(3600),
  /** Calls in flight; the scenario's own default when absent. */
  connections: z.coerce.number().int().min(1).max(1024).optional(),
  out: z.string().min(1),
});

export type StackArgs = z.infer<typeof StackArgsSchema>;
export type RunArgs = z.infer<typeof RunArgsSchema>;

const COMMON_USAGE = `  --db sqlite|postgresql   the stack's database (default sqlite; postgresql: a fresh database on TEST_PG_URL)
  --proxy-port N           the proxy, the front door (default ${DEFAULT_PORTS.proxy}; 0: a free port)
  --admin-port N           the admin process (default ${DEFAULT_PORTS.admin})
  --upstream-port N        the free JSON upstream (default ${DEFAULT_PORTS.upstream})
  --merchant-port N        the @x402/express v2 merchant on its stub chain (default ${DEFAULT_PORTS.merchant})
Each flag can also be set as LOADTEST_<FLAG> in the environment (LOADTEST_PROXY_PORT=8180, LOADTEST_DB=postgresql).`;

export const RUN_USAGE = `usage: npm run loadtest -- <${SCENARIOS.join('|')}> [options]
  --duration S             seconds of load (default 30, at most 3600)
  --connections N          calls in flight (default: relay 32, the others 16)
  --out DIR                where the report goes (default loadtest/results)
${COMMON_USAGE}`;

export const STACK_USAGE = `usage: npm run loadtest:stack -- [options]
${COMMON_USAGE}`;

/** A command line that does not parse: the message, then the usage. */
export class UsageError extends Error {}

const FLAGS = {
  db: { type: 'string' },
  'proxy-port': { type: 'string' },
  'admin-port': { type: 'string' },
  'upstream-port': { type: 'string' },
  'merchant-port': { type: 'string' },
  duration: { type: 'string' },
  connections: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flag = Exclude<keyof typeof FLAGS, 'help'>;

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function read(argv: string[], env: NodeJS.ProcessEnv, allowed: readonly Flag[]) {
  const { values, positionals } = parse(argv);
  for (const k of Object.keys(values)) {
    if (k !== 'help' && !allowed.includes(k as Flag)) throw new UsageError(`unknown option --${k}`);
  }
  const value = (flag: Flag): string | undefined => {
    const v = values[flag];
    const fromEnv = env[`LOADTEST_${flag.toUpperCase().replace(/-/g, '_')}`];
    return typeof v === 'string' ? v : fromEnv === '' ? undefined : fromEnv;
  };
  return { help: values.help === true, positionals, value };
}

function check<T>(schema: z.ZodType<T>, raw: unknown): T {
  const r = schema.safeParse(raw);
  if (!r.success) {
    throw new UsageError(r.error.issues.map((i) => `${i.path.join('.') || 'argument'}: ${i.message}`).join('; '));
  }
  return r.data;
}

function stackRaw(value: (flag: Flag) => string | undefined) {
  return {
    db: value('db') ?? 'sqlite',
    ports: {
      proxy: value('proxy-port') ?? DEFAULT_PORTS.proxy,
      admin: value('admin-port') ?? DEFAULT_PORTS.admin,
      upstream: value('upstream-port') ?? DEFAULT_PORTS.upstream,
      merchant: value('merchant-port') ?? DEFAULT_PORTS.merchant,
    },
  };
}

const STACK_FLAGS: readonly Flag[] = ['db', 'proxy-port', 'admin-port', 'upstream-port', 'merchant-port'];

/** null: --help was asked for. */
export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): RunArgs | null {
  const { help, positionals, value } = read(argv, env, [...STACK_FLAGS, 'duration', 'connections', 'out']);
  if (help) return null;
  if (positionals.length !== 1) throw new UsageError(`one scenario expected (${SCENARIOS.join(', ')})`);
  return check(RunArgsSchema, {
    ...stackRaw(value),
    scenario: positionals[0],
    duration: value('duration') ?? 30,
    connections: value('connections'),
    out: value('out') ?? DEFAULT_OUT,
  });
}

/** null: --help was asked for. */
export function parseStackArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): StackArgs | null {
  const { help, positionals, value } = read(argv, env, STACK_FLAGS);
  if (help) return null;
  if (positionals.length !== 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  return check(StackArgsSchema, stackRaw(value));
}
