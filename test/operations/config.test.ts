// config/index.ts: one zod schema over the environment, defaults beside each key, every problem at once.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import test from 'ava';
import { ConfigError, ConfigSchema, loadConfig } from '../../config/index.js';
import { runEntry } from '../support/cli.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

test('defaults: SQLite in ./data, loopback, ports 3000/3001, sandbox', (t) => {
  const c = loadConfig({});
  t.is(c.HOST, '127.0.0.1');
  t.is(c.ADMIN_PORT, 3000);
  t.is(c.PROXY_PORT, 3001);
  t.is(c.DATA_DIR, './data');
  t.is(c.dataDir, resolve('data'));
  t.deepEqual(c.database, { kind: 'sqlite', path: resolve('data', 'payroute.sqlite') });
  t.is(c.ENVIRONMENT, 'sandbox');
  t.is(c.SECRETS_KEY, undefined);
  t.is(c.LOG_LEVEL, 'info');
  t.is(c.LOG_FILE, undefined);
  t.is(c.BODY_LIMIT_BYTES, 1_048_576);
  t.is(c.API_KEY_CACHE_MS, 1000);
  t.is(c.ACCESS_TOKEN_TTL_SECS, 86_400);
  t.is(c.PROOF_TTL_SECS, 3600);
  t.regex(c.DOCS_URL, /\/docs\/errors\.md$/);
  t.is(c.adminUrl, 'http://127.0.0.1:3000');
  t.is(c.publicUrl, 'http://127.0.0.1:3001');
});

test('empty values mean unset, as in most .env files; unrelated variables are ignored', (t) => {
  const c = loadConfig({ ADMIN_PORT: '', DATABASE_URL: '', SECRETS_KEY: '', PATH: '/usr/bin', npm_config_x: '1' });
  t.is(c.ADMIN_PORT, 3000);
  t.is(c.database.kind, 'sqlite');
  t.is(c.SECRETS_KEY, undefined);
});

test('numbers are whole decimal numbers within range', (t) => {
  const c = loadConfig({ ADMIN_PORT: '8080', PROXY_PORT: '0', BODY_LIMIT_BYTES: '10', API_KEY_CACHE_MS: '0' });
  t.is(c.ADMIN_PORT, 8080);
  t.is(c.PROXY_PORT, 0, 'port 0 = any free port');
  t.is(c.BODY_LIMIT_BYTES, 10);
  t.is(c.API_KEY_CACHE_MS, 0);
  for (const bad of [' ', 'abc', '1e3', '0x10', '-1', '1.5', '65536', '3000 ']) {
    t.deepEqual(
      problemsOf({ ADMIN_PORT: bad }).map((p) => p.split(' ')[0]),
      ['ADMIN_PORT'],
      `ADMIN_PORT=${JSON.stringify(bad)}`,
    );
  }
  t.is(problemsOf({ API_KEY_CACHE_MS: '1001' }).length, 1, 'revocation must take effect within a second');
  t.is(problemsOf({ BODY_LIMIT_BYTES: '0' }).length, 1);
  t.deepEqual(
    problemsOf({ ROUTER_MAX_AUTH_TTL_SECS: '29' }).map((p) => p.split(' ')[0]),
    ['ROUTER_MAX_AUTH_TTL_SECS'],
    'a facilitator refuses < 6 s left',
  );
  t.deepEqual(problemsOf({ ROUTER_MAX_AUTH_TTL_SECS: '30' }), []);
  // The fee sweep waits out the longest paid exchange (connect + ROUTER_STREAM_MAX_MS) and a minute more.
  t.deepEqual(
    problemsOf({ ROUTER_STREAM_MAX_MS: '3600000' }).map((p) => p.split(' ')[0]),
    ['ROUTER_FEE_SWEEP_AFTER_SECS'],
  );
  t.deepEqual(problemsOf({ ROUTER_STREAM_MAX_MS: '3600000', ROUTER_FEE_SWEEP_AFTER_SECS: '3671' }), []);
  t.deepEqual(
    problemsOf({ SQLITE_SYNCHRONOUS: 'off' }).map((p) => p.split(' ')[0]),
    ['SQLITE_SYNCHRONOUS'],
  );
  t.is(loadConfig({}).SQLITE_SYNCHRONOUS, 'full');
  // Idempotency keys are kept at least a day, so a client's retries within a day never make a second effect.
  t.is(loadConfig({}).IDEMPOTENCY_KEEP_SECS, 86_400);
  t.deepEqual(
    problemsOf({ IDEMPOTENCY_KEEP_SECS: '86399' }).map((p) => p.split(' ')[0]),
    ['IDEMPOTENCY_KEEP_SECS'],
  );
  t.is(loadConfig({ IDEMPOTENCY_KEEP_SECS: '172800' }).IDEMPOTENCY_KEEP_SECS, 172_800);
});

test('DATABASE_URL: unset, sqlite:<path> (relative or absolute), postgres:// and postgresql://', (t) => {
  t.deepEqual(loadConfig({ DATA_DIR: '/tmp/pr-x' }).database, { kind: 'sqlite', path: '/tmp/pr-x/payroute.sqlite' });
  t.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:./db/a.sqlite' }).database, {
    kind: 'sqlite',
    path: resolve('db/a.sqlite'),
  });
  t.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/p.sqlite' }).database, {
    kind: 'sqlite',
    path: '/var/lib/p.sqlite',
  });
  for (const url of ['postgres://payroute:pw@db:5432/payroute', 'postgresql://u@127.0.0.1/x?sslmode=disable']) {
    t.deepEqual(loadConfig({ DATABASE_URL: url }).database, { kind: 'postgresql', url });
  }
  for (const bad of ['mysql://u@h/db', 'sqlite:', 'postgres://', './data/payroute.sqlite', 'SQLITE:x']) {
    const problems = problemsOf({ DATABASE_URL: bad });
    t.is(problems.length, 1, bad);
    t.regex(problems[0] ?? '', /^DATABASE_URL /);
  }
});

test('derived URLs: ADMIN_URL and PUBLIC_URL win; a wildcard HOST derives loopback URLs', (t) => {
  const c = loadConfig({ ADMIN_URL: 'http://admin:3000', PUBLIC_URL: 'https://pay.example.com/' });
  t.is(c.adminUrl, 'http://admin:3000');
  t.is(c.publicUrl, 'https://pay.example.com', 'trailing slash dropped');
  const wildcard = loadConfig({ HOST: '0.0.0.0', ADMIN_PORT: '4000', PROXY_PORT: '4001' });
  t.is(wildcard.HOST, '0.0.0.0', 'still binds every interface');
  t.is(wildcard.adminUrl, 'http://127.0.0.1:4000');
  t.is(wildcard.publicUrl, 'http://127.0.0.1:4001');
  t.is(loadConfig({ HOST: '::' }).adminUrl, 'http://[::1]:3000');
  t.is(loadConfig({ HOST: '::1' }).publicUrl, 'http://[::1]:3001');
  for (const key of ['ADMIN_URL', 'PUBLIC_URL', 'DOCS_URL']) t.is(problemsOf({ [key]: 'not a url' }).length, 1, key);
});

test('several bad keys are reported all at once, each naming its key', (t) => {
  const problems = problemsOf({
    ADMIN_PORT: 'abc',
    PROXY_PORT: '70000',
    DATABASE_URL: 'mysql://x',
    ENVIRONMENT: 'staging',
    SECRETS_KEY: 'too-short',
    LOG_LEVEL: 'loud',
    API_KEY_CACHE_MS: '5000',
  });
  const keys = problems.map((p) => p.split(' ')[0]).sort();
  t.deepEqual(keys, [
    'ADMIN_PORT',
    'API_KEY_CACHE_MS',
    'DATABASE_URL',
    'ENVIRONMENT',
    'LOG_LEVEL',
    'PROXY_PORT',
    'SECRETS_KEY',
  ]);
  const err = t.throws(() => loadConfig({ ADMIN_PORT: 'abc', LOG_LEVEL: 'loud' }), { instanceOf: ConfigError });
  t.regex(err?.message ?? '', /invalid configuration:\n {2}- ADMIN_PORT .*\n {2}- LOG_LEVEL /);
});

const LIVE_RPC = { RPC_URL_8453: 'https://base-rpc.example' };

test('live requires SECRETS_KEY (reported alongside other problems); a short key is refused anywhere', (t) => {
  t.deepEqual(problemsOf({ ENVIRONMENT: 'live', ...LIVE_RPC }), ['SECRETS_KEY is required when ENVIRONMENT=live']);
  const withOthers = problemsOf({ ENVIRONMENT: 'live', ADMIN_PORT: 'abc', ...LIVE_RPC });
  t.is(withOthers.length, 2);
  t.true(withOthers.includes('SECRETS_KEY is required when ENVIRONMENT=live'));
  t.is(problemsOf({ ENVIRONMENT: 'live', SECRETS_KEY: 'x'.repeat(32), ...LIVE_RPC }).length, 0);
  t.regex(problemsOf({ SECRETS_KEY: 'x'.repeat(31) }).join(), /SECRETS_KEY must be at least 32 characters/);
});

test('settlement backend: ledger in sandbox, rpc in live; rpc needs the chain of its environment', (t) => {
  const RPC_PROBLEM =
    "SETTLEMENT_BACKEND rpc needs the JSON-RPC URL of the environment's chain (RPC_URL_84532 in sandbox, RPC_URL_8453 in live)";
  t.deepEqual(loadConfig({}).settlement, { backend: 'ledger' });
  const key = { SECRETS_KEY: 'x'.repeat(32) };
  t.deepEqual(loadConfig({ ENVIRONMENT: 'live', ...key, ...LIVE_RPC }).settlement, {
    backend: 'rpc',
    rpcUrl: 'https://base-rpc.example',
  });
  // live pays on chain by default: without its RPC URL it does not start (the ledger could never be funded there).
  t.deepEqual(problemsOf({ ENVIRONMENT: 'live', ...key }), [RPC_PROBLEM]);
  // The sandbox's URL does not serve live, nor live's the sandbox.
  t.deepEqual(problemsOf({ ENVIRONMENT: 'live', ...key, RPC_URL_84532: 'http://127.0.0.1:8545' }), [RPC_PROBLEM]);
  t.deepEqual(problemsOf({ SETTLEMENT_BACKEND: 'rpc', ...LIVE_RPC }), [RPC_PROBLEM]);
  t.deepEqual(loadConfig({ SETTLEMENT_BACKEND: 'rpc', RPC_URL_84532: 'http://127.0.0.1:8545' }).settlement, {
    backend: 'rpc',
    rpcUrl: 'http://127.0.0.1:8545',
  });
  // An operator may keep live on the ledger explicitly (e.g. a staging copy), and nothing else is accepted.
  t.deepEqual(loadConfig({ ENVIRONMENT: 'live', ...key, SETTLEMENT_BACKEND: 'ledger' }).settlement, {
    backend: 'ledger',
  });
  t.regex(problemsOf({ SETTLEMENT_BACKEND: 'chain' }).join(), /SETTLEMENT_BACKEND/);
  t.regex(problemsOf({ RPC_URL_84532: 'ftp://node.example' }).join(), /RPC_URL_84532/);
  t.regex(problemsOf({ CHAIN_BALANCE_TTL_MS: '1e3' }).join(), /CHAIN_BALANCE_TTL_MS/);
});

test('every configuration key is documented in .env.example and in the README', (t) => {
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  for (const key of Object.keys(ConfigSchema.shape)) {
    t.regex(example, new RegExp(`^# ${key}=`, 'm'), `.env.example lists ${key}`);
    t.true(readme.includes(`\`${key}\``), `README lists ${key}`);
  }
});

test('every entry point refuses a bad environment: exit non-zero, every problem on stderr, nothing started', async (t) => {
  const bad = {
    ADMIN_PORT: 'abc',
    PROXY_PORT: '0',
    DATABASE_URL: 'mysql://x',
    ENVIRONMENT: 'live',
    SECRETS_KEY: '',
    LOG_LEVEL: 'loud',
    DATA_DIR: '/nonexistent/payroute-should-not-be-created',
  };
  const results = await Promise.all(
    ['admin/server.ts', 'proxy/server.ts', 'admin/cli/start.ts', 'admin/cli/migrate.ts'].map(async (entry) => ({
      entry,
      ...(await runEntry(entry, [], bad)),
    })),
  );
  for (const r of results) {
    t.is(r.code, 2, `${r.entry} exit code\n${r.stderr}`);
    t.is(r.stdout, '', `${r.entry} printed no readiness line`);
    for (const key of ['ADMIN_PORT', 'DATABASE_URL', 'SECRETS_KEY', 'LOG_LEVEL']) {
      t.regex(r.stderr, new RegExp(`- ${key} `), `${r.entry} names ${key}`);
    }
  }
});
