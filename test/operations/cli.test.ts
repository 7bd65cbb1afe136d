// The operator CLI as a user runs it: a real `node --import tsx admin/cli/cli.ts ...` process per command, on a
// temp SQLite file and on PostgreSQL. Every command must print exactly one JSON object on stdout.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { getAddress } from 'viem';
import { ERROR_DOCS_PATH, anchorOf, renderErrorDocs } from '../../admin/cli/gen-error-docs.js';
import { loadConfig } from '../../config/index.js';
import { createCredentialResolver } from '../../shared/auth/credential-resolver.js';
import { createUser } from '../../shared/accounts/users.js';
import { NETWORKS, usdcOf } from '../../shared/assets.js';
import { type ServiceContext, createContext } from '../../shared/context.js';
import { sha256Hex } from '../../shared/crypto/hashing.js';
import { ApiKey, User } from '../../shared/db/entities/index.js';
import { migrate, openDb } from '../../shared/db/orm.js';
import { AppError, toEnvelope } from '../../shared/errors/app-error.js';
import { catalogue } from '../../shared/errors/catalogue.js';
import { createLogger } from '../../shared/log.js';
import { balanceOf } from '../../shared/settlement/token-ledger.js';
import { type CliResult, runCli } from '../support/cli.js';
import { DB_KINDS, type TestDatabase, createTestDatabase, postgresAvailable } from '../support/databases.js';

const pgAvailable = await postgresAvailable();

/** stdout is one line, one JSON object (not an array, not a log line), newline-terminated. */
function exactlyOneJsonObject(
  t: { true(v: boolean, m?: string): void; is(a: unknown, b: unknown, m?: string): void },
  r: CliResult,
): void {
  t.true(r.stdout.endsWith('\n'), `stdout ends with a newline: ${JSON.stringify(r.stdout)}\nstderr: ${r.stderr}`);
  t.is(r.stdout.trimEnd().split('\n').length, 1, `one line on stdout: ${JSON.stringify(r.stdout)}`);
  const parsed: unknown = JSON.parse(r.stdout);
  t.true(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), 'a JSON object');
}

function refused(
  t: Parameters<typeof exactlyOneJsonObject>[0] & { not(a: unknown, b: unknown, m?: string): void },
  r: CliResult,
): void {
  exactlyOneJsonObject(t, r);
  t.not(r.code, 0, 'non-zero exit');
  t.is(typeof r.json.error, 'string', `error field: ${r.stdout}`);
  t.is(typeof r.json.message, 'string');
}

// Commands that need no database: the argument and configuration checks come first.
const noDbEnv = (): Record<string, string> => ({
  DATA_DIR: mkdtempSync(join(tmpdir(), 'payroute-cli-nodb-')),
  DATABASE_URL: '',
  SECRETS_KEY: '',
  ENVIRONMENT: 'sandbox',
  LOG_LEVEL: 'warn',
});

test('unknown commands, leftover words and unknown options: one JSON error with the usage, exit 2', async (t) => {
  const env = noDbEnv();
  try {
    for (const args of [
      [],
      ['nope'],
      ['users', 'delete'],
      ['users', 'create', 'extra', '--email', 'a@example.test'],
      ['users', 'create', '--bogus', 'x'],
    ]) {
      const r = await runCli(args, env);
      refused(t, r);
      t.is(r.code, 2, args.join(' '));
      t.is(r.json.error, 'BCK.HTTP.0400');
      t.regex(r.json.usage, /users create --email/);
    }
  } finally {
    rmSync(env.DATA_DIR ?? '', { recursive: true, force: true });
  }
});

test('a bad configuration is one JSON error listing every problem, exit 2', async (t) => {
  const env: Record<string, string> = {
    ...noDbEnv(),
    ENVIRONMENT: 'staging',
    ADMIN_PORT: 'abc',
    DATABASE_URL: 'mysql://x',
  };
  try {
    const r = await runCli(['users', 'create', '--email', 'a@example.test'], env);
    refused(t, r);
    t.is(r.code, 2);
    const problems = (r.json.problems as string[]).join('\n');
    t.regex(problems, /ENVIRONMENT/);
    t.regex(problems, /ADMIN_PORT/);
    t.regex(problems, /DATABASE_URL/);
  } finally {
    rmSync(env.DATA_DIR ?? '', { recursive: true, force: true });
  }
});

test('docs/errors.md is up to date with the catalogue (npm run docs:errors)', (t) => {
  t.is(readFileSync(ERROR_DOCS_PATH, 'utf8'), renderErrorDocs(), 'run `npm run docs:errors` and commit docs/errors.md');
});

test('every docsUrl anchor is a heading of docs/errors.md', (t) => {
  const doc = readFileSync(ERROR_DOCS_PATH, 'utf8');
  // GitHub's heading slug: lowercase, punctuation other than `-` and `_` removed, spaces to `-`.
  const slugs = [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
    (m[1] ?? '')
      .toLowerCase()
      .replace(/[^a-z0-9 _-]/g, '')
      .replace(/ /g, '-'),
  );
  for (const code of Object.keys(catalogue) as (keyof typeof catalogue)[]) {
    const url = new URL(toEnvelope(new AppError(code), 'c', 'https://example.test/docs/errors.md').docsUrl);
    t.is(url.hash, `#${anchorOf(code)}`);
    t.is(slugs.filter((s) => s === anchorOf(code)).length, 1, `one heading for ${code}`);
  }
});

for (const kind of DB_KINDS) {
  const available = kind === 'sqlite' || pgAvailable;
  // A missing local PostgreSQL is a loud, counted skip (CI=true turns it into a failure in postgresAvailable).
  const register = available ? test : test.skip;
  const title = (s: string) => `[${kind}] ${s}`;
  let db: TestDatabase | undefined;
  let dataDir = '';
  let env: Record<string, string> = {};
  let ctx: ServiceContext | undefined;

  if (available) {
    test.before(async () => {
      db = await createTestDatabase(kind);
      dataDir = mkdtempSync(join(tmpdir(), 'payroute-cli-'));
      env = {
        DATA_DIR: dataDir,
        DATABASE_URL: db.url,
        SECRETS_KEY: randomBytes(32).toString('hex'),
        ENVIRONMENT: 'sandbox',
        LOG_LEVEL: 'warn',
        API_KEY_CACHE_MS: '0',
      };
      // Migrate once up front so the concurrently running CLI processes below do not race to create the schema.
      const config = loadConfig(env);
      ctx = await createContext(config, createLogger({ LOG_LEVEL: 'warn' }, 'test'), { migrate: true });
    });
    test.after.always(async () => {
      await ctx?.db.close();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });
  }
  const context = (): ServiceContext => {
    if (ctx === undefined) throw new Error('not set up');
    return ctx;
  };
  const email = (tag: string) => `${tag}-${randomBytes(4).toString('hex')}@Example.test`;

  // Set-up users are made in-process (as the CLI does); only the command under test is spawned.
  const setupUser = (tag: string) => createUser(context(), email(tag));
  // Checks that do not depend on the database run once, on SQLite.
  const once = kind === 'sqlite' ? register : undefined;

  register(
    title('users create prints the user, a checksummed wallet and a sandbox key; keys are stored hashed'),
    async (t) => {
      const address = email('Create');
      const r = await runCli(['users', 'create', '--email', address], env);
      exactlyOneJsonObject(t, r);
      t.is(r.code, 0, r.stderr);
      t.deepEqual(Object.keys(r.json).sort(), ['apiKey', 'apiKeyId', 'email', 'userId', 'walletAddress']);
      t.regex(r.json.userId, /^[0-9a-f-]{36}$/);
      t.is(r.json.email, address.toLowerCase());
      t.is(r.json.walletAddress, getAddress(r.json.walletAddress));
      t.regex(r.json.apiKey, /^sandbox:[A-Za-z0-9_-]{40,}$/);
      t.regex(r.json.apiKeyId, /^[0-9a-f-]{36}$/);
      // The key works, for this user.
      const caller = await createCredentialResolver(context()).resolve(`Bearer ${r.json.apiKey}`);
      t.is(caller.kind, 'apiKey');
      t.is(caller.userId, r.json.userId);
      t.is(caller.walletAddress, r.json.walletAddress);

      const second = await runCli(['keys', 'create', '--user', r.json.userId], env);
      t.is(second.code, 0, second.stderr);
      const keys = [r.json.apiKey as string, second.json.apiKey as string];
      // A separate connection, as an operator inspecting the database would have.
      const raw = await openDb(db?.database ?? { kind: 'sqlite', path: '' });
      try {
        const rows = await raw.em().find(ApiKey, { userId: r.json.userId });
        t.is(rows.length, 2);
        for (const key of keys) {
          const row = rows.find((x) => x.keyHash === sha256Hex(key));
          t.truthy(row, 'a row whose hash is the key');
          t.is(row?.environment, 'sandbox');
          t.true(key.startsWith(row?.keyPrefix ?? '#'), 'the prefix is the start of the key');
          t.true((row?.keyPrefix.length ?? 99) < 20, 'only a short prefix is kept');
        }
        // Every column of every API key and user row, read without the ORM's mapping.
        const dump = JSON.stringify([
          await raw.em().execute('select * from api_key'),
          await raw.em().execute('select * from app_user'),
        ]);
        for (const key of keys) t.false(dump.includes(key.slice('sandbox:'.length)), 'no plain key in the database');
        const user = await raw.em().findOneOrFail(User, { id: r.json.userId });
        t.regex(user.walletKeyEnc, /^v1\./, 'the wallet key is sealed');
      } finally {
        await raw.close();
      }
    },
  );

  register(title('keys create adds a working key; keys revoke stops it; unknown ids are refused'), async (t) => {
    const user = await setupUser('keys');
    const r = await runCli(['keys', 'create', '--user', user.userId], env);
    exactlyOneJsonObject(t, r);
    t.is(r.code, 0, r.stderr);
    t.deepEqual(Object.keys(r.json).sort(), ['apiKey', 'apiKeyId', 'environment', 'userId']);
    t.is(r.json.userId, user.userId);
    t.is(r.json.environment, 'sandbox');
    t.regex(r.json.apiKey, /^sandbox:/);
    t.not(r.json.apiKey, user.apiKey);
    const auth = createCredentialResolver(context()); // API_KEY_CACHE_MS=0: every call reads the database
    t.like(await auth.resolve(`Bearer ${r.json.apiKey}`), { kind: 'apiKey', apiKeyId: r.json.apiKeyId });

    const revoked = await runCli(['keys', 'revoke', '--key-id', r.json.apiKeyId], env);
    exactlyOneJsonObject(t, revoked);
    t.is(revoked.code, 0, revoked.stderr);
    t.deepEqual(revoked.json, { apiKeyId: r.json.apiKeyId, revoked: true });
    await t.throwsAsync(auth.resolve(`Bearer ${r.json.apiKey}`), { instanceOf: AppError });
    t.is((await auth.resolve(`Bearer ${user.apiKey}`)).userId, user.userId, 'the other key still works');
    const again = await runCli(['keys', 'revoke', '--key-id', r.json.apiKeyId], env);
    t.is(again.code, 0, `revoking twice is harmless: ${again.stdout}`);

    refused(t, await runCli(['keys', 'create', '--user', 'no-such-user'], env));
    refused(t, await runCli(['keys', 'revoke', '--key-id', 'no-such-key'], env));
  });

  register(title('users create refuses a duplicate email, in any case'), async (t) => {
    const user = await setupUser('dup');
    const dup = await runCli(['users', 'create', '--email', user.email.toUpperCase()], env);
    refused(t, dup);
    t.is(dup.json.error, 'BCK.HTTP.0400');
    t.regex(dup.json.message, /exists/);
  });

  once?.(title('users create and keys refuse missing or invalid options'), async (t) => {
    for (const args of [
      ['users', 'create'],
      ['users', 'create', '--email', 'not-an-email'],
      ['keys', 'revoke'],
    ]) {
      const r = await runCli(args, env);
      refused(t, r);
      t.is(r.json.error, 'BCK.HTTP.0400', args.join(' '));
    }
  });

  register(title('faucet credits the sandbox USDC ledger (or --asset) and prints the new balance'), async (t) => {
    const wallet = (await setupUser('faucet')).walletAddress;
    const usdc = usdcOf('sandbox').address;
    const r = await runCli(['faucet', '--address', wallet.toLowerCase(), '--amount', '5000000'], env);
    exactlyOneJsonObject(t, r);
    t.is(r.code, 0, r.stderr);
    t.deepEqual(Object.keys(r.json).sort(), ['address', 'amount', 'asset', 'balance', 'txId']);
    t.is(r.json.address, wallet, 'checksummed');
    t.is(r.json.asset, usdc);
    t.is(r.json.amount, '5000000');
    t.is(r.json.balance, '5000000');
    const second = await runCli(['faucet', '--address', wallet, '--amount', '1'], env);
    t.is(second.json.balance, '5000001');
    t.not(second.json.txId, r.json.txId);
    t.is(await balanceOf(context(), wallet, usdc), 5_000_001n);

    const eurc = NETWORKS.sandbox.assets.find((a) => a.symbol === 'EURC')?.address ?? '';
    const e = await runCli(['faucet', '--address', wallet, '--amount', '42', '--asset', eurc.toLowerCase()], env);
    t.is(e.code, 0, e.stderr);
    t.is(e.json.asset, eurc);
    t.is(e.json.balance, '42');
    t.is(await balanceOf(context(), wallet, usdc), 5_000_001n, 'the other asset is untouched');
  });

  once?.(title('faucet refuses bad addresses and amounts that are not positive 64-bit integers'), async (t) => {
    const ok = '0x00000000000000000000000000000000000000a1';
    for (const args of [
      ['faucet', '--address', ok],
      ['faucet', '--address', 'abc', '--amount', '1'],
      ['faucet', '--address', '0x1234', '--amount', '1'],
      ['faucet', '--address', ok, '--amount', '1', '--asset', 'usdc'],
      ['faucet', '--address', ok, '--amount', '-1'],
      ['faucet', '--address', ok, '--amount=-1'],
      ['faucet', '--address', ok, '--amount', '1.5'],
      ['faucet', '--address', ok, '--amount', 'abc'],
      ['faucet', '--address', ok, '--amount', '0'],
      ['faucet', '--address', ok, '--amount', '9223372036854775808'],
    ]) {
      const r = await runCli(args, env);
      refused(t, r);
      t.is(r.json.error, 'BCK.HTTP.0400', args.join(' '));
    }
    t.is(await balanceOf(context(), getAddress(ok), usdcOf('sandbox').address), 0n, 'nothing was credited');
  });

  register(
    title('wallets balance reads the ledger; wallets address names the operator wallet; a bad address is refused'),
    async (t) => {
      const wallet = (await setupUser('wallets')).walletAddress;
      await runCli(['faucet', '--address', wallet, '--amount', '7'], env);
      const r = await runCli(['wallets', 'balance', '--address', wallet.toLowerCase()], env);
      exactlyOneJsonObject(t, r);
      t.is(r.code, 0, r.stderr);
      const usdc = usdcOf('sandbox').address;
      const eurc = NETWORKS.sandbox.assets.find((a) => a.symbol === 'EURC')?.address ?? '';
      t.deepEqual(r.json, {
        address: wallet,
        backend: 'ledger',
        network: 'eip155:84532',
        balances: [
          { symbol: 'USDC', asset: usdc, balance: '7' },
          { symbol: 'EURC', asset: eurc, balance: '0' },
        ],
      });
      const o = await runCli(['wallets', 'address'], env);
      t.is(o.code, 0, o.stderr);
      t.deepEqual(Object.keys(o.json).sort(), ['address', 'backend', 'network']);
      t.regex(String(o.json.address), /^0x[0-9a-fA-F]{40}$/);
      t.is(o.json.backend, 'ledger');
      const bad = await runCli(['wallets', 'balance', '--address', 'nope'], env);
      refused(t, bad);
      t.regex(String(bad.json.message), /--address/);
    },
  );

  register(title('the live environment issues live keys and refuses the faucet'), async (t) => {
    // live settles on chain by default; creating a user and refusing the faucet never reads it.
    const live = { ...env, ENVIRONMENT: 'live', RPC_URL_8453: 'http://127.0.0.1:9' };
    const user = await runCli(['users', 'create', '--email', email('live')], live);
    t.is(user.code, 0, user.stderr);
    t.regex(user.json.apiKey, /^live:/);
    const r = await runCli(['faucet', '--address', user.json.walletAddress, '--amount', '1'], live);
    refused(t, r);
    t.regex(r.json.message, /sandbox/);
    t.is(await balanceOf(context(), user.json.walletAddress, usdcOf('live').address), 0n);
  });

  once?.(title('live without SECRETS_KEY is a configuration error, before anything is written'), async (t) => {
    const r = await runCli(['users', 'create', '--email', email('nokey')], {
      ...env,
      ENVIRONMENT: 'live',
      SECRETS_KEY: '',
    });
    refused(t, r);
    t.is(r.code, 2);
    t.regex((r.json.problems as string[]).join('\n'), /SECRETS_KEY/);
  });

  once?.(title('migrate applies nothing more on a migrated database'), async (t) => {
    const r = await runCli(['migrate'], env);
    exactlyOneJsonObject(t, r);
    t.is(r.code, 0, r.stderr);
    t.deepEqual(r.json, { migrated: true });
    t.deepEqual(await migrate(context().db), []);
  });
}
