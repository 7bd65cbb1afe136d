// The secrets key must be the key the data is sealed with (shared/secrets/key-check.ts), on SQLite and PostgreSQL,
// with the real entry points: the admin process, the proxy (alone and as a supervisor of workers), `npm start`'s
// launcher and the CLI exit 2 before they listen or write, naming the key they were given (SECRETS_KEY, or the
// generated DATA_DIR/secrets.key; never its value) and what to do. The first start of an empty database records the
// check value; a database from before the check gets it from the first key that opens its sealed data; two processes
// starting together with different keys on an empty database: one is refused. And the report this answers, end to
// end: `npm start` with the generated key, data made, SECRETS_KEY added to .env: refused, then rotated and served.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { loadConfig } from '../../config/index.js';
import { ensureOperatorWallet } from '../../shared/accounts/service-wallets.js';
import { createUser } from '../../shared/accounts/users.js';
import { createContext } from '../../shared/context.js';
import { generatedKeyPath, secretBox } from '../../shared/crypto/secrets.js';
import { migrate, openDb } from '../../shared/db/orm.js';
import { emSql } from '../../shared/db/sql.js';
import { ensureSigningKey } from '../../shared/keys/signing-keys.js';
import { createLogger } from '../../shared/log.js';
import { type ProcessOutput, runCli, runEntry } from '../support/cli.js';
import { DB_KINDS, type DbKind, type TestDatabase, createTestDatabase } from '../support/databases.js';
import { apiClient } from '../support/http.js';
import { registerOn } from '../support/matrix.js';
import { freePort, listening } from '../support/ports.js';
import { attachPlan, createAgent, createPlan } from '../support/registry-builders.js';
import { permissionBody } from '../support/x402.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = import.meta.resolve('tsx');

const newKey = (): string => randomBytes(32).toString('hex');
const ENV_REFUSAL = 'cannot start: SECRETS_KEY (set in the environment or .env) does not open the data in';
const quiet = () => createLogger({ LOG_LEVEL: 'silent' }, 'test');

interface Sealed {
  readonly db: TestDatabase;
  readonly dataDir: string;
  /** The environment the data was made with (SECRETS_KEY '' means the generated file in dataDir). */
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A migrated database with sealed data (a user's wallet, a signing key, the operator wallet) under `secretsKey`. */
async function sealedData(kind: DbKind, secretsKey: string): Promise<Sealed> {
  const db = await createTestDatabase(kind);
  const dataDir = mkdtempSync(join(tmpdir(), 'payroute-keycheck-'));
  const env = { DATABASE_URL: db.url, DATA_DIR: dataDir, SECRETS_KEY: secretsKey, ENVIRONMENT: 'sandbox' };
  const ctx = await createContext(loadConfig(env), quiet(), { migrate: true });
  try {
    await createUser(ctx, `owner-${randomBytes(3).toString('hex')}@example.test`);
    await ensureSigningKey(ctx);
    await ensureOperatorWallet(ctx);
  } finally {
    await ctx.db.close();
  }
  return {
    db,
    dataDir,
    env: { ...env, LOG_LEVEL: 'warn' },
    cleanup: async () => {
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The stored check value and the number of users, read with a connection of the test's own. */
async function stateOf(db: TestDatabase): Promise<{ check: string | undefined; users: number }> {
  const d = await openDb(db.database);
  try {
    const sql = emSql(d.em(), d.dialect);
    const [row] = await sql.all('select key_check from secrets_key_check');
    const [n] = await sql.all('select count(*) as n from app_user');
    return { check: row === undefined ? undefined : String(row.key_check), users: Number(n?.n) };
  } finally {
    await d.close();
  }
}

/** A refused start: exit 2, no readiness line, the refusal on stderr, no key's value anywhere in what it printed. */
function refusedStart(t: ExecutionContext, what: string, r: ProcessOutput, message: string, keys: string[]): void {
  t.is(r.code, 2, `${what}: exit code\n${r.stderr}`);
  t.false(r.stdout.includes('"ready"'), `${what}: printed no readiness line: ${r.stdout}`);
  t.true(r.stderr.includes(message), `${what}: says why\n${r.stderr}`);
  for (const k of keys) t.false(`${r.stdout}${r.stderr}`.includes(k), `${what}: shows no key value`);
}

/** Runs the admin process, the proxy, the proxy supervising 2 workers and npm start's launcher, each on ports of its own. */
async function startEach(env: Record<string, string>) {
  const ports = await Promise.all([0, 1, 2, 3, 4].map(() => freePort()));
  const [admin, proxy, workers, launcherAdmin, launcherProxy] = ports as [number, number, number, number, number];
  const runs = await Promise.all([
    runEntry('admin/server.ts', [], { ...env, ADMIN_PORT: String(admin) }),
    runEntry('proxy/server.ts', [], { ...env, PROXY_PORT: String(proxy) }),
    runEntry('proxy/server.ts', [], { ...env, PROXY_PORT: String(workers), PROXY_WORKERS: '2' }),
    runEntry('admin/cli/start.ts', [], {
      ...env,
      ADMIN_PORT: String(launcherAdmin),
      PROXY_PORT: String(launcherProxy),
    }),
  ]);
  const names = ['admin/server.ts', 'proxy/server.ts', 'proxy/server.ts (PROXY_WORKERS=2)', 'admin/cli/start.ts'];
  const open = (await Promise.all(ports.map(listening))).some((x) => x);
  return { runs: runs.map((r, i) => ({ name: names[i] ?? '', r })), open };
}

for (const kind of DB_KINDS) {
  // Serial: each test starts several processes at once; more at a time only starves them on a small machine.
  const register = registerOn(kind, { serial: true });
  const title = (s: string) => `[${kind}] ${s}`;

  register(
    title(
      'another SECRETS_KEY: admin, proxy, proxy workers, npm start and the CLI exit 2 naming it; nothing listens, nothing is written',
    ),
    async (t) => {
      const right = newKey();
      const data = await sealedData(kind, right);
      t.teardown(() => data.cleanup());
      const before = await stateOf(data.db);
      t.is(before.check, secretBox(right).keyCheck, 'the first start recorded the check value');
      const wrong = newKey();
      const env = { ...data.env, SECRETS_KEY: wrong };

      const { runs, open } = await startEach(env);
      for (const { name, r } of runs) refusedStart(t, name, r, ENV_REFUSAL, [right, wrong]);
      for (const { name, r } of runs) {
        t.regex(r.stderr, /secrets rotate/, `${name}: says what to do`);
        t.is(r.stderr.split('cannot start:').length - 1, 1, `${name}: says it once (no crash loop of workers)`);
      }
      t.false(open, 'no port listens');

      const cli = await runCli(['users', 'create', '--email', 'refused@example.test'], env);
      t.is(cli.code, 2, cli.stdout + cli.stderr);
      t.is(cli.json.error, 'BCK.HTTP.0400');
      t.is(cli.json.message, 'invalid configuration');
      t.true(String(cli.json.problems?.[0]).startsWith('SECRETS_KEY (set in the environment or .env) does not open'));
      t.false(cli.stdout.includes(wrong) || cli.stdout.includes(right));
      t.deepEqual(await stateOf(data.db), before, 'no user created, the check value unchanged');

      // The key the data was sealed with still starts (the refusals changed nothing).
      const ok = await runCli(['catalog', 'list'], data.env);
      t.is(ok.code, 0, ok.stdout + ok.stderr);
    },
  );

  register(
    title(
      'the generated key file: another DATA_DIR/secrets.key is refused naming the file; SECRETS_KEY set over it names the file that opens the data',
    ),
    async (t) => {
      const data = await sealedData(kind, '');
      t.teardown(() => data.cleanup());
      const generated = generatedKeyPath(data.dataDir);
      const dataKey = readFileSync(generated, 'utf8');
      // Another data directory: another generated key, over the same database.
      const otherDir = mkdtempSync(join(tmpdir(), 'payroute-keycheck-other-'));
      t.teardown(() => rmSync(otherDir, { recursive: true, force: true }));
      const env = { ...data.env, DATA_DIR: otherDir };
      const message = `cannot start: the generated key in DATA_DIR/secrets.key (${generatedKeyPath(otherDir)}; used because SECRETS_KEY is unset) does not open the data in`;
      const { runs, open } = await startEach(env);
      const otherKey = readFileSync(generatedKeyPath(otherDir), 'utf8');
      for (const { name, r } of runs) refusedStart(t, name, r, message, [dataKey, otherKey]);
      t.false(open, 'no port listens');
      const cli = await runCli(['catalog', 'list'], env);
      t.is(cli.code, 2);
      t.regex(String(cli.json.problems?.[0]), /^the generated key in DATA_DIR\/secrets\.key .*SECRETS_KEY is unset/);

      // SECRETS_KEY set in the data directory whose generated key sealed the data (the report): the message names
      // that file as the key that opens the data, and the rotation from it.
      const wrong = newKey();
      const admin = await runEntry('admin/server.ts', [], { ...data.env, SECRETS_KEY: wrong, ADMIN_PORT: '0' });
      refusedStart(t, 'admin/server.ts', admin, ENV_REFUSAL, [dataKey, wrong]);
      t.true(
        admin.stderr.includes(`The data opens with the generated key in DATA_DIR/secrets.key (${generated})`),
        admin.stderr,
      );
      t.true(admin.stderr.includes(`npm run cli -- secrets rotate --old-key-file ${generated}`), admin.stderr);
      t.is((await stateOf(data.db)).check, secretBox(dataKey).keyCheck);
    },
  );

  register(
    title(
      'a database from before the check (sealed data, no check value): a wrong key is refused, the right one records it',
    ),
    async (t) => {
      const right = newKey();
      const data = await sealedData(kind, right);
      t.teardown(() => data.cleanup());
      const d = await openDb(data.db.database);
      await emSql(d.em(), d.dialect).run('delete from secrets_key_check');
      await d.close();

      const wrong = await runCli(['catalog', 'list'], { ...data.env, SECRETS_KEY: newKey() });
      t.is(wrong.code, 2, wrong.stdout + wrong.stderr);
      t.regex(String(wrong.json.problems?.[0]), /^SECRETS_KEY .* does not open the data/);
      t.is((await stateOf(data.db)).check, undefined, 'nothing recorded for a key that does not open the data');
      const proxy = await runEntry('proxy/server.ts', [], { ...data.env, SECRETS_KEY: newKey(), PROXY_PORT: '0' });
      refusedStart(t, 'proxy/server.ts', proxy, ENV_REFUSAL, [right]);

      const ok = await runCli(['catalog', 'list'], data.env);
      t.is(ok.code, 0, ok.stdout + ok.stderr);
      t.is((await stateOf(data.db)).check, secretBox(right).keyCheck, 'recorded once the key opened the data');
    },
  );

  register(
    title(
      'an empty database: two first starts with different keys at once, one records its key and the other is refused',
    ),
    async (t) => {
      const db = await createTestDatabase(kind);
      const dataDir = mkdtempSync(join(tmpdir(), 'payroute-keycheck-race-'));
      t.teardown(async () => {
        await db.drop();
        rmSync(dataDir, { recursive: true, force: true });
      });
      const d = await openDb(db.database);
      await migrate(d);
      await d.close();
      const keys = [newKey(), newKey()];
      const env = { DATABASE_URL: db.url, DATA_DIR: dataDir, ENVIRONMENT: 'sandbox', LOG_LEVEL: 'warn' };
      const runs = await Promise.all(keys.map((k) => runCli(['catalog', 'list'], { ...env, SECRETS_KEY: k })));
      t.deepEqual(runs.map((r) => r.code).sort(), [0, 2], runs.map((r) => r.stdout + r.stderr).join('\n'));
      const winner = runs.findIndex((r) => r.code === 0);
      t.is((await stateOf(db)).check, secretBox(keys[winner] ?? '').keyCheck);
    },
  );
}

// --- The report: `npm start` with the generated key, then SECRETS_KEY appended to .env ---

interface Launcher {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of a fresh machine: none of payroute's keys set. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^(HOST|ADMIN_PORT|PROXY_PORT|ADMIN_URL|PUBLIC_URL|DATA_DIR|DATABASE_URL|ENVIRONMENT|SECRETS_KEY.*|LOG_.*|PAYROUTE_.*)$/.test(
        key,
      )
    )
      delete env[key];
  }
  return env;
}

/** `npm start` from the sources: the launcher reads ./.env as the npm script makes it. */
function launch(cwd: string): Launcher {
  const child = spawn(
    process.execPath,
    ['--env-file-if-exists=.env', '--import', TSX, join(ROOT, 'admin/cli/start.ts')],
    {
      cwd,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on('line', (l) => lines.push(l));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited };
}

/** Bounds a start or a stop that fails; a loaded machine can take far longer than an idle one. */
const LIMIT_MS = 240_000;

async function within<T>(what: string, p: Promise<T>, launcher: Launcher): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: not within ${LIMIT_MS} ms\n${launcher.lines.join('\n')}`)),
      LIMIT_MS,
    );
  });
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

async function ready(urls: string[], launcher: Launcher): Promise<void> {
  const poll = async (url: string) => {
    for (;;) {
      if (launcher.child.exitCode !== null) throw new Error(`the launcher exited:\n${launcher.lines.join('\n')}`);
      const r = await fetch(`${url}/readyz`).catch(() => undefined);
      if (r?.status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  await within('ready', Promise.all(urls.map(poll)), launcher);
}

async function stop(launcher: Launcher): Promise<void> {
  launcher.child.kill('SIGTERM');
  const end = await within('stop', launcher.exited, launcher);
  if (end.code !== 0)
    throw new Error(`the launcher stopped with ${JSON.stringify(end)}:\n${launcher.lines.join('\n')}`);
}

for (const kind of DB_KINDS) {
  const register = registerOn(kind, { serial: true });
  register(
    `[${kind}] the report: npm start on the generated key, data made, SECRETS_KEY added to .env: refused naming it; rotated, served`,
    async (t) => {
      const cwd = mkdtempSync(join(tmpdir(), 'payroute-report-'));
      const pg = kind === 'postgresql' ? await createTestDatabase('postgresql') : undefined;
      let launcher: Launcher | undefined;
      t.teardown(async () => {
        if (launcher !== undefined && launcher.child.exitCode === null && launcher.child.signalCode === null) {
          launcher.child.kill('SIGTERM');
          await launcher.exited;
        }
        await pg?.drop();
        rmSync(cwd, { recursive: true, force: true });
      });
      const [adminPort, proxyPort] = [await freePort(), await freePort()];
      const adminUrl = `http://127.0.0.1:${adminPort}`;
      const proxyUrl = `http://127.0.0.1:${proxyPort}`;
      writeFileSync(
        join(cwd, '.env'),
        [
          `ADMIN_PORT=${adminPort}`,
          `PROXY_PORT=${proxyPort}`,
          'LOG_LEVEL=warn',
          ...(pg ? [`DATABASE_URL=${pg.url}`] : []),
          '',
        ].join('\n'),
      );
      // What the CLI reads there (npm run cli reads ./.env; the test's CLI process is given it).
      const dataDir = join(cwd, 'data');
      const cliEnv = { DATA_DIR: dataDir, DATABASE_URL: pg?.url ?? '', SECRETS_KEY: '', LOG_LEVEL: 'warn' };

      // 1. A trial with the generated key: a user, a plan token (signed with the service's key), an x402 permission
      //    (signed with the user's wallet key).
      launcher = launch(cwd);
      await ready([adminUrl, proxyUrl], launcher);
      const user = await runCli(['users', 'create', '--email', 'trial@example.test'], cliEnv);
      t.is(user.code, 0, user.stdout + user.stderr);
      const api = apiClient(`${proxyUrl}/api/v1`, user.json.apiKey);
      const plan = await createPlan(api);
      const agent = await createAgent(api);
      await attachPlan(api, agent.agentId, plan.planId);
      const minted = await api.post('/protocol/plans/mint', {
        planId: plan.planId,
        holderAddress: user.json.walletAddress,
        amount: '10',
      });
      t.is(minted.status, 200, minted.text);
      const works = async (label: string) => {
        const jwks = await fetch(`${proxyUrl}/.well-known/jwks.json`);
        t.is(jwks.status, 200, `${label}: JWKS`);
        const token = await api.get(`/protocol/token/${plan.planId}/${agent.agentId}`);
        t.is(token.status, 200, `${label}: plan token ${token.text}`);
        const permission = await api.post('/x402/permissions', permissionBody({ planId: plan.planId }));
        t.is(permission.status, 201, `${label}: x402 permission ${permission.text}`);
        return ((await jwks.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
      };
      const kids = await works('with the generated key');
      await stop(launcher);

      // 2. The README's Docker section: SECRETS_KEY appended to .env, which npm start reads too.
      const secretsKey = newKey();
      appendFileSync(join(cwd, '.env'), `SECRETS_KEY=${secretsKey}\n`);
      launcher = launch(cwd);
      const refused = await within('refusal', launcher.exited, launcher);
      const output = launcher.lines.join('\n');
      t.deepEqual(refused, { code: 2, signal: null }, output);
      t.true(output.includes(ENV_REFUSAL), output);
      t.true(
        output.includes(
          `The data opens with the generated key in DATA_DIR/secrets.key (${join(dataDir, 'secrets.key')})`,
        ),
        output,
      );
      t.true(output.includes(`npm run cli -- secrets rotate --old-key-file ${join(dataDir, 'secrets.key')}`), output);
      t.false(output.includes(secretsKey), 'the key value is not shown');
      t.false(await listening(adminPort), 'the admin port is closed');
      t.false(await listening(proxyPort), 'the proxy port is closed');

      // 3. What the message says to do: the rotation, then npm start again, and everything made before works.
      const rotated = await runCli(['secrets', 'rotate', '--old-key-file', join(dataDir, 'secrets.key')], {
        ...cliEnv,
        SECRETS_KEY: secretsKey,
      });
      t.is(rotated.code, 0, rotated.stdout + rotated.stderr);
      t.like(rotated.json, { rotated: true, from: '--old-key-file', to: 'SECRETS_KEY' });
      const counts = Object.fromEntries(
        (rotated.json.columns as { table: string; resealed: number }[]).map((c) => [c.table, c.resealed]),
      );
      t.like(counts, { app_user: 1, signing_key: 1, service_wallet: 1 });
      launcher = launch(cwd);
      await ready([adminUrl, proxyUrl], launcher);
      t.deepEqual(await works('after the rotation'), kids, 'the same signing key, opened with the new key');
      await stop(launcher);
    },
  );
}
