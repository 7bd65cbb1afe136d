// The seeded stack a load run drives, shared by the benchmark (loadtest/bench-router.ts) and the load-test kit
// (loadtest/run.ts, loadtest/serve-stack.ts): the real admin and proxy processes on a fresh database
// (test/support/stack.ts), the free upstream and the official @x402/express v2 merchant on its stub chain
// (loadtest/servers.ts), a user with an erc4337 `usdc` delegation whose wallet is funded in the sandbox ledger and on
// the merchant's chain, and optionally a commerce access token of the same user, got as a connector gets one.
import { createServer } from 'node:net';
import { faucet } from '../shared/settlement/token-ledger.js';
import type { DbKind } from '../test/support/databases.js';
import { assetOf } from '../test/support/merchants/fixtures.js';
import { approve, authorizeBody, codeForm, connector, pkce, postForm } from '../test/support/oauth.js';
import { type Stack, startStack } from '../test/support/stack.js';
import { type Child, registerPids, startChild, stopChildren } from './processes.js';

export const USDC = assetOf('sandbox', 'USDC');

export interface Ports {
  readonly proxy: number;
  readonly admin: number;
  readonly upstream: number;
  readonly merchant: number;
}

/**
 * The kit's fixed ports, the defaults of loadtest/k6/*.ts too (BASE_URL, TARGET_URL, PAID_URL): 8080 is the usual
 * port of a local HTTP service, and the counterparts sit apart from it at 9100 (merchant) and 9101 (upstream).
 */
export const DEFAULT_PORTS: Ports = { proxy: 8080, admin: 8081, upstream: 9101, merchant: 9100 };

/** Free ports everywhere: the benchmark's choice (it prints the URLs it uses). */
export const FREE_PORTS: Ports = { proxy: 0, admin: 0, upstream: 0, merchant: 0 };

export interface CommerceAccess {
  /** An access token of a `commerce` grant (ES256 JWT, `at+jwt`); its delegation is the grant's. */
  readonly token: string;
  /** The registered client, for a k6 run that gets its own token in setup(). */
  readonly clientId: string;
  readonly redirectUri: string;
  /** An access token of another `commerce` grant of the same client and user, for the MCP endpoint (RFC 8707
   *  `resource` {host_url}/mcp), with the same terms. */
  readonly mcpToken: string;
}

export interface World {
  readonly stack: Stack;
  readonly apiKey: string;
  readonly walletAddress: string;
  readonly delegationId: string;
  readonly upstream: Child;
  readonly merchant: Child;
  readonly commerce: CommerceAccess | undefined;
  /** Stops every counterpart and the stack, and drops the database (once, however often it is called). */
  stop(): Promise<void>;
}

export interface WorldOptions {
  readonly db: DbKind;
  readonly ports: Ports;
  /** Get a commerce access token for the user. */
  readonly commerce: boolean;
  /** More wallets the merchant's chain funds, prepared on the stack before the merchant starts (the benchmark's). */
  readonly payers?: (stack: Stack) => Promise<readonly string[]>;
}

/** Router settings of a load run: loopback targets allowed, no per-user concurrency cap in the way. */
const STACK_ENV = {
  ROUTER_ALLOW_PRIVATE_TARGETS: 'true',
  ROUTER_MAX_CONCURRENT_PER_USER: '10000',
  LOG_LEVEL: 'warn',
  // A day, the most the config allows: the token loadtest:stack prints stays good while a person runs k6 with it.
  OAUTH_ACCESS_TOKEN_TTL_SECS: '86400',
};

/** Refuses to start when a fixed port is taken, naming it (rather than a child's EADDRINUSE stack trace). */
export async function assertPortsFree(ports: Ports): Promise<void> {
  for (const [role, port] of Object.entries(ports)) {
    if (port === 0) continue;
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (err: NodeJS.ErrnoException) =>
        reject(new Error(`port ${port} (${role}) is not free on 127.0.0.1: ${err.code ?? err.message}`)),
      );
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
  }
}

export async function startWorld(o: WorldOptions): Promise<World> {
  const stack = await startStack(o.db, {
    ...STACK_ENV,
    ...(o.ports.admin === 0 ? {} : { ADMIN_PORT: String(o.ports.admin) }),
    ...(o.ports.proxy === 0 ? {} : { PROXY_PORT: String(o.ports.proxy) }),
  });
  registerPids(stack.pids.admin, stack.pids.proxy);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await stopChildren();
      await stack.stop();
    })();
    return stopping;
  };
  try {
    const user = await stack.user();
    const d = await user.api.post<{ delegationId: string }>('/delegation/create', {
      provider: 'erc4337',
      spendingLimitCents: 100_000_000_000,
      durationSecs: 86_400,
      currency: 'usdc',
    });
    if (d.status !== 201 && d.status !== 200) throw new Error(`delegation/create ${d.status}: ${d.text}`);
    // Fund the buyer in the sandbox ledger (the router backs each authorization with it).
    await faucet(stack.ctx, user.walletAddress, USDC.address, 10n ** 15n);
    const more = o.payers === undefined ? [] : await o.payers(stack);
    const upstream = await startChild('upstream', {}, o.ports.upstream);
    const merchant = await startChild(
      'merchant',
      { BENCH_MINT: JSON.stringify([user.walletAddress, ...more]) },
      o.ports.merchant,
    );
    return {
      stack,
      apiKey: user.apiKey,
      walletAddress: user.walletAddress,
      delegationId: d.body.delegationId,
      upstream,
      merchant,
      commerce: o.commerce ? await commerceAccess(stack, user.apiKey) : undefined,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A commerce access token for the user whose API key is `apiKey`, as a connector gets one: a registered client
 * (shared/oauth/clients.ts, as the CLI registers it), the user's approval (POST /oauth/authorize with their key:
 * a commerce grant and its capped erc4337 delegation, $1,000,000 in usdc for a day, the most a consent may ask) and
 * the code redeemed with PKCE at POST /oauth/token. It lives OAUTH_ACCESS_TOKEN_TTL_SECS (a day here).
 */
async function commerceAccess(stack: Stack, apiKey: string): Promise<CommerceAccess> {
  const c = await connector(stack, {
    name: 'Load-test Connector',
    allowedConsentTypes: ['commerce'],
    verified: false,
    accountLevel: false,
  });
  const terms = { scope: 'commerce', spending_limit_cents: 100_000_000, currency: 'usdc', duration_secs: 86_400 };
  // The MCP endpoint's resource identifier, as a host reads it from the protected-resource metadata.
  const metadata = await fetch(`${stack.proxyUrl}/.well-known/oauth-protected-resource/mcp`);
  const { resource } = (await metadata.json()) as { resource: string };
  const tokenFor = async (extra: Record<string, unknown>): Promise<{ token: string; redirectUri: string }> => {
    const p = await pkce();
    const body = authorizeBody(c, p, { ...terms, ...extra });
    const approved = await approve(stack, apiKey, body);
    if ((approved.status !== 200 && approved.status !== 201) || typeof approved.body.code !== 'string') {
      throw new Error(`oauth/authorize ${approved.status}: ${JSON.stringify(approved.body)}`);
    }
    const t = await postForm(stack, '/oauth/token', codeForm(c, approved.body.code, p.verifier));
    if (t.status !== 200 || typeof t.body.access_token !== 'string') {
      throw new Error(`oauth/token ${t.status}: ${JSON.stringify(t.body)}`);
    }
    return { token: t.body.access_token, redirectUri: body.redirect_uri };
  };
  const api = await tokenFor({});
  const mcp = await tokenFor({ resource });
  return { token: api.token, clientId: c.registration.clientId, redirectUri: api.redirectUri, mcpToken: mcp.token };
}
