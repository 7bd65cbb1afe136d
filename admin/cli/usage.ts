// The operator CLI's usage text, one entry per command: `--help`, `<command> --help` and the usage carried by a
// refused command line are all built from it, so they cannot disagree.

export interface CommandHelp {
  /** The command line, as typed after `npm run cli --`. */
  readonly synopsis: string;
  /** What the command does and the JSON object it prints. */
  readonly summary: string;
}

export const COMMAND_HELP = {
  'users create': {
    synopsis: 'users create --email E',
    summary:
      'Creates a user with a custodial wallet and a first API key.\n' +
      'Prints { userId, email, walletAddress, apiKeyId, apiKey }; the key is shown this once.',
  },
  'keys create': {
    synopsis: 'keys create --user USER_ID',
    summary: 'Creates another API key for the user.\nPrints { apiKeyId, apiKey, userId, environment }.',
  },
  'keys revoke': {
    synopsis: 'keys revoke --key-id KEY_ID',
    summary: 'Revokes an API key (revoking twice is harmless).\nPrints { apiKeyId, revoked: true }.',
  },
  faucet: {
    synopsis: 'faucet --address ADDRESS --amount ATOMIC [--asset TOKEN_ADDRESS]   (sandbox ledger only)',
    summary:
      "Credits the sandbox ledger; the asset defaults to the environment's USDC, the amount is in atomic units.\n" +
      'Refused in live and with SETTLEMENT_BACKEND=rpc. Prints { address, asset, amount, balance, txId }.',
  },
  'wallets balance': {
    synopsis: 'wallets balance --address ADDRESS   (on chain with SETTLEMENT_BACKEND=rpc, with what is reserved)',
    summary:
      "A wallet's balances. Prints { address, backend, network, balances: [{ symbol, asset, balance }] }; with rpc\n" +
      "read on chain now, with block and each token's reserved and available.",
  },
  'wallets address': {
    synopsis: 'wallets address                     (the operator wallet, which pays the gas with rpc)',
    summary: 'The operator wallet. Prints { address, backend, network } (with rpc also gasWei, its balance).',
  },
  'catalog add': {
    synopsis:
      'catalog add --slug SLUG --url UPSTREAM_BASE_URL [--name N] [--description D] [--category C]\n' +
      '            [--protocol x402|mpp] [--price-hint H]',
    summary:
      "Sets the router's upstream for a slug (callers send the slug and never see the URL, which must pass the\n" +
      'SSRF policy), and what agents read to choose it; a field not given is cleared. Prints the entry:\n' +
      '{ slug, name, description, category, protocol, priceHint, url, createdAt, updatedAt }.',
  },
  'catalog update': {
    synopsis:
      'catalog update SLUG [--url U] [--name N] [--description D] [--category C] [--protocol P] [--price-hint H]',
    summary: 'Changes the fields given (an empty value, --category=, clears one). Prints the entry.',
  },
  'catalog list': {
    synopsis: 'catalog list',
    summary: 'Prints { entries: [entry] }, each with its upstream url.',
  },
  'oauth-clients create': {
    synopsis:
      'oauth-clients create --name N --redirect-uri U [--redirect-uri U2 ...] [--verified] [--account-level]\n' +
      '                     [--consent-types commerce,account_access]',
    summary:
      'Registers a public OAuth client (a connector); consent types default to commerce.\n' +
      'Prints { clientId, name, redirectUris, verified, accountLevel, allowedConsentTypes }.',
  },
  'oauth-clients list': {
    synopsis: 'oauth-clients list',
    summary:
      'Prints { clients: [{ clientId, name, redirectUris, verified, accountLevel, allowedConsentTypes, disabled }] }.',
  },
  'oauth-clients update': {
    synopsis:
      'oauth-clients update CLIENT_ID [--name N] [--redirect-uri U ...] [--[no-]verified] [--[no-]account-level]\n' +
      '                     [--consent-types ...]',
    summary: 'Changes a client; --redirect-uri replaces the whole list. Prints the client as listed.',
  },
  'oauth-clients disable': {
    synopsis: 'oauth-clients disable CLIENT_ID',
    summary:
      'Disables a client: unknown to every OAuth endpoint from then on, and every grant it holds revoked with it\n' +
      "(the grant's tokens and delegation: its access tokens stop at their next call). Prints the client as listed,\n" +
      'disabled: true, and grantsRevoked: the number of grants it revoked. Running it again revokes any grant left.',
  },
  'secrets rotate': {
    synopsis: 'secrets rotate [--old-key-file FILE]      (or SECRETS_KEY_PREVIOUS; stop the service first)',
    summary:
      'Re-encrypts every stored secret (wallet keys, signing keys, stored answers) from the previous key to the\n' +
      'configured one (SECRETS_KEY, or DATA_DIR/secrets.key when it is unset), in one transaction, and records the\n' +
      "new key's check value. The previous key is read from FILE (such as DATA_DIR/secrets.key) or SECRETS_KEY_PREVIOUS,\n" +
      'never from the command line. Running it again finishes an interrupted rotation; a previous key that is not\n' +
      "the data's is refused with nothing changed. Prints { rotated: true, from, to, columns: [{ table, column,\n" +
      'resealed, alreadyNew }] }.',
  },
  migrate: {
    synopsis: 'migrate',
    summary:
      'Applies pending migrations (every command does first) and prints { migrated: true }.\n' +
      'npm run db:migrate -- --help lists status and down.',
  },
} as const satisfies Record<string, CommandHelp>;

/** The CLI's commands: cli.ts declares one handler for each, no more, no fewer. */
export type CommandName = keyof typeof COMMAND_HELP;

const HELP: Readonly<Record<string, CommandHelp | undefined>> = COMMAND_HELP;

/** The synopsis after `prefix`, its continuation lines aligned under its first. */
function line(prefix: string, synopsis: string): string {
  return `${prefix}${synopsis.replaceAll('\n', `\n${' '.repeat(prefix.length)}`)}`;
}

/** Every command's synopsis under one heading: the text of `--help` and of a refused command line's `usage`. */
export const USAGE = [
  'usage: npm run cli -- <command>',
  ...Object.values(COMMAND_HELP).map((c) => line('  ', c.synopsis)),
].join('\n');

const FOOTER = [
  '',
  'Each command applies pending migrations first, then prints exactly one JSON object on stdout (logs go to',
  'stderr). Exit status: 0 done; 1 refused ({ error, message }); 2 unknown command or option, or invalid',
  'configuration. `<command> --help` describes one command.',
].join('\n');

/**
 * The help asked for by the words before `--help`: every command (no words), one command (with the words that
 * follow it, such as a client id), or the commands of a group (`users --help`); undefined when the words name none.
 */
export function helpFor(words: readonly string[]): string | undefined {
  const [first, second] = words;
  if (first === undefined) return `${USAGE}\n${FOOTER}\n`;
  const one = HELP[`${first} ${second}`] ?? (words.length === 1 ? HELP[first] : undefined);
  if (one !== undefined) return `${line('usage: npm run cli -- ', one.synopsis)}\n\n${one.summary}\n`;
  if (words.length !== 1) return undefined;
  const group = Object.entries(COMMAND_HELP).filter(([name]) => name.startsWith(`${first} `));
  if (group.length === 0) return undefined;
  return `${['usage:', ...group.map(([, c]) => line('  npm run cli -- ', c.synopsis))].join('\n')}\n`;
}
