// Operator CLI: `npm run cli -- <command>`. Every command prints exactly one JSON object on stdout (logs go
// to stderr) and applies pending migrations first; `--help` (alone or after a command) prints usage text instead.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type Config, ConfigError, loadConfig } from '../../config/index.js';
import { EvmAddress } from '../../shared/address.js';
import { createApiKey, revokeApiKey } from '../../shared/accounts/api-keys.js';
import { createUser } from '../../shared/accounts/users.js';
import { usdcOf } from '../../shared/assets.js';
import { type ServiceContext, createContext, keySourceOf } from '../../shared/context.js';
import { readKeyFile, secretBox } from '../../shared/crypto/secrets.js';
import { AppError } from '../../shared/errors/app-error.js';
import { createLogger } from '../../shared/log.js';
import { PositiveAmount, toWire } from '../../shared/money.js';
import { createClient, disableClient, listClients, updateClient } from '../../shared/oauth/clients.js';
import { SecretsKeyMismatch } from '../../shared/secrets/key-check.js';
import { RotationRefused, rotateSecrets } from '../../shared/secrets/rotate.js';
import { addCatalogEntry, listCatalog, updateCatalogEntry } from '../../shared/catalog/entries.js';
import { faucet } from '../../shared/settlement/token-ledger.js';
import { operatorWalletReport, walletBalances } from '../../shared/settlement/wallet-report.js';
import { type CommandName, USAGE, helpFor } from './usage.js';

type OptionValue = string | string[] | boolean | undefined;
type Options = Partial<Record<keyof typeof OPTIONS, OptionValue>>;
/** A command: its options, and the words after the command's own (an id), as many as ARGS says. */
type Handler = (ctx: ServiceContext, opts: Options, args: string[]) => Promise<object>;

function need(opts: Options, name: keyof typeof OPTIONS): string {
  const v = opts[name];
  if (typeof v !== 'string' || v === '') throw new AppError('BCK.HTTP.0400', { details: `--${name} is required` });
  return v;
}

/** `--consent-types a,b`: a list; an empty value is the empty list. */
const listOption = (v: OptionValue): string[] | undefined =>
  typeof v === 'string' ? v.split(',').filter((x) => x !== '') : undefined;

const bool = (v: OptionValue): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** The registration fields as options give them (absent options stay absent). */
function clientFields(o: Options) {
  return {
    name: typeof o.name === 'string' ? o.name : undefined,
    redirectUris: Array.isArray(o['redirect-uri']) ? o['redirect-uri'] : undefined,
    verified: bool(o.verified),
    accountLevel: bool(o['account-level']),
    allowedConsentTypes: listOption(o['consent-types']),
  };
}

const str = (v: OptionValue): string | undefined => (typeof v === 'string' ? v : undefined);

/** The catalog entry's fields as options give them (absent options stay absent; an empty one clears). */
function catalogFields(o: Options) {
  return {
    url: str(o.url),
    name: str(o.name),
    description: str(o.description),
    category: str(o.category),
    protocol: str(o.protocol),
    priceHint: str(o['price-hint']),
  };
}

/**
 * The previous key of `secrets rotate`: from a file (--old-key-file, such as the generated DATA_DIR/secrets.key) or
 * from SECRETS_KEY_PREVIOUS, never from the command line, where it would stay in the shell's history and show in
 * the process list.
 */
function previousKey(ctx: ServiceContext, opts: Options): { key: string; from: string } {
  const file = opts['old-key-file'];
  const env = ctx.config.SECRETS_KEY_PREVIOUS;
  if (typeof file === 'string' && env !== undefined)
    throw new AppError('BCK.HTTP.0400', {
      details: 'give the previous key once: --old-key-file or SECRETS_KEY_PREVIOUS, not both',
    });
  if (env !== undefined) return { key: env, from: 'SECRETS_KEY_PREVIOUS' };
  if (typeof file !== 'string' || file === '')
    throw new AppError('BCK.HTTP.0400', {
      details:
        'the previous key is needed: --old-key-file FILE (a file holding it, such as DATA_DIR/secrets.key) or SECRETS_KEY_PREVIOUS',
    });
  const read = readKeyFile(file);
  if (!read.ok) throw new AppError('BCK.HTTP.0400', { details: `--old-key-file: ${read.reason}` });
  return { key: read.key, from: '--old-key-file' };
}

async function rotate(ctx: ServiceContext, opts: Options): Promise<object> {
  const previous = previousKey(ctx, opts);
  const source = keySourceOf(ctx.config);
  try {
    const columns = await rotateSecrets(ctx.db, secretBox(previous.key), ctx.box, ctx.now());
    return {
      rotated: true,
      from: previous.from,
      to: source.kind === 'env' ? 'SECRETS_KEY' : 'DATA_DIR/secrets.key',
      columns,
    };
  } catch (err) {
    if (err instanceof RotationRefused) throw new AppError('BCK.HTTP.0400', { details: err.message });
    throw err;
  }
}

/** Commands that check the secrets key themselves: every other one is refused when it does not open the data. */
const OWN_KEY_CHECK: ReadonlySet<string> = new Set(['secrets rotate']);

/** Commands that take one word after their name: the client id. */
const ARGS: Record<string, number> = { 'oauth-clients update': 1, 'oauth-clients disable': 1, 'catalog update': 1 };

const commands: Record<CommandName, Handler> = {
  'users create': (ctx, o) => createUser(ctx, need(o, 'email')),
  'keys create': (ctx, o) => createApiKey(ctx, need(o, 'user')),
  'keys revoke': (ctx, o) => revokeApiKey(ctx, need(o, 'key-id')),
  'catalog add': (ctx, o) => addCatalogEntry(ctx, need(o, 'slug'), { ...catalogFields(o), url: need(o, 'url') }),
  'catalog update': (ctx, o, [slug]) => updateCatalogEntry(ctx, slug ?? '', catalogFields(o)),
  'catalog list': (ctx) => listCatalog(ctx),
  'oauth-clients create': (ctx, o) => {
    const f = clientFields(o);
    return createClient(ctx, { ...f, name: need(o, 'name'), redirectUris: f.redirectUris ?? [] });
  },
  'oauth-clients list': (ctx) => listClients(ctx),
  'oauth-clients update': (ctx, o, [clientId]) => updateClient(ctx, clientId ?? '', clientFields(o)),
  'oauth-clients disable': (ctx, _o, [clientId]) => disableClient(ctx, clientId ?? ''),
  migrate: async () => ({ migrated: true }),
  'wallets balance': (ctx, o) => {
    const address = z.object({ a: EvmAddress }).safeParse({ a: need(o, 'address') });
    if (!address.success) throw new AppError('BCK.HTTP.0400', { details: '--address must be an EVM address' });
    return walletBalances(ctx, address.data.a);
  },
  'wallets address': (ctx) => operatorWalletReport(ctx),
  'secrets rotate': rotate,
  faucet: async (ctx, o) => {
    if (ctx.config.ENVIRONMENT !== 'sandbox')
      throw new AppError('BCK.HTTP.0400', { details: 'the faucet exists only in the sandbox' });
    if (ctx.config.settlement.backend !== 'ledger')
      throw new AppError('BCK.HTTP.0400', {
        details: 'the faucet funds the internal ledger: with SETTLEMENT_BACKEND=rpc, fund the wallet on chain',
      });
    const address = z.object({ a: EvmAddress }).safeParse({ a: need(o, 'address') });
    if (!address.success) throw new AppError('BCK.HTTP.0400', { details: '--address must be an EVM address' });
    const amount = PositiveAmount.safeParse(need(o, 'amount'));
    if (!amount.success)
      throw new AppError('BCK.HTTP.0400', { details: '--amount must be a positive integer in atomic units' });
    let asset: string = usdcOf(ctx.config.ENVIRONMENT).address;
    if (o.asset !== undefined) {
      const a = z.object({ a: EvmAddress }).safeParse({ a: o.asset });
      if (!a.success) throw new AppError('BCK.HTTP.0400', { details: '--asset must be a token address' });
      asset = a.data.a;
    }
    const r = await faucet(ctx, address.data.a, asset, amount.data);
    return { address: address.data.a, asset, amount: toWire(amount.data), balance: toWire(r.balance), txId: r.txId };
  },
};

/** Looked up by the words typed: any string, most of them no command. */
const byName: Readonly<Record<string, Handler | undefined>> = commands;

function print(obj: object): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

const OPTIONS = {
  email: { type: 'string' },
  user: { type: 'string' },
  'key-id': { type: 'string' },
  address: { type: 'string' },
  amount: { type: 'string' },
  asset: { type: 'string' },
  slug: { type: 'string' },
  url: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  category: { type: 'string' },
  protocol: { type: 'string' },
  'price-hint': { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  verified: { type: 'boolean' },
  'account-level': { type: 'boolean' },
  'consent-types': { type: 'string' },
  'old-key-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse() {
  try {
    return parseArgs({ allowPositionals: true, allowNegative: true, strict: true, options: OPTIONS });
  } catch (err) {
    // Unknown option, missing or dash-leading value (`--amount -1`): a usage error, not an internal one.
    print({ error: 'BCK.HTTP.0400', message: err instanceof Error ? err.message : 'invalid arguments', usage: USAGE });
    return undefined;
  }
}

async function main(): Promise<number> {
  const args = parse();
  if (args === undefined) return 2;
  const { positionals, values } = args;
  // Help needs neither configuration nor database: it answers before either is read.
  if (values.help === true) {
    const help = helpFor(positionals);
    if (help !== undefined) {
      process.stdout.write(help);
      return 0;
    }
  }
  const name =
    positionals.length >= 2 && byName[`${positionals[0]} ${positionals[1]}`] !== undefined
      ? `${positionals[0]} ${positionals[1]}`
      : (positionals[0] ?? '');
  const handler = byName[name];
  // Leftover (or missing) words (`users create extra`) are refused rather than ignored.
  const words = name.split(' ').length;
  if (handler === undefined || words + (ARGS[name] ?? 0) !== positionals.length) {
    print({ error: 'BCK.HTTP.0400', message: `unknown command "${positionals.join(' ')}"`, usage: USAGE });
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    print({ error: 'BCK.HTTP.0400', message: 'invalid configuration', problems: err.problems });
    return 2;
  }
  const log = createLogger({ ...config, LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL }, 'cli');
  let ctx: ServiceContext;
  try {
    ctx = await createContext(config, log, { migrate: true, verifySecretsKey: !OWN_KEY_CHECK.has(name) });
  } catch (err) {
    // A key that does not open the data is a configuration problem, reported as one (exit 2), before any command
    // writes with it.
    if (!(err instanceof SecretsKeyMismatch)) throw err;
    print({ error: 'BCK.HTTP.0400', message: 'invalid configuration', problems: [err.message] });
    return 2;
  }
  try {
    print(await handler(ctx, values, positionals.slice(words)));
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      print({ error: err.code, message: err.details });
      return 1;
    }
    throw err;
  } finally {
    await ctx.db.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message.split('\n')[0] : 'unexpected error';
    print({ error: 'BCK.HTTP.0500', message });
    process.exit(1);
  },
);
