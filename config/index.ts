// The one configuration module. Every key is read from the environment, validated by one zod schema,
// and every problem is reported at once (node-oidc-provider's habit: name the exact key that is wrong).
import { resolve } from 'node:path';
import { z } from 'zod';

/** A whole number in decimal digits: z.coerce.number() alone would read '', ' ', '1e3' and '0x10' as numbers. */
const whole = z
  .string()
  .regex(/^[0-9]{1,15}$/, 'must be a whole number')
  .transform(Number);
const port = whole.pipe(z.number().int().min(0).max(65535));

export const ConfigSchema = z
  .object({
    /** Interface both processes bind to. Default 127.0.0.1: expose deliberately, behind TLS. */
    HOST: z.string().min(1).default('127.0.0.1'),
    /** Admin process (Koa): registry, credits, delegations, JWKS. Default 3000. */
    ADMIN_PORT: port.default(3000),
    /** Proxy process (node:http): the public front door and the payment router. Default 3001. */
    PROXY_PORT: port.default(3001),
    /** Where the proxy forwards non-router paths. Default http://HOST:ADMIN_PORT (loopback when HOST is 0.0.0.0 or ::). */
    ADMIN_URL: z.url().optional(),
    /** Public base of `{host_url}` used in docs URLs and JWT issuers. Default http://HOST:PROXY_PORT (loopback when
     *  HOST is 0.0.0.0 or ::). Set it to the address clients use when the service is exposed. */
    PUBLIC_URL: z.url().optional(),
    /** Where the human-facing pages live (the OAuth consent page the discovery document's authorization_endpoint
     *  names). Default PUBLIC_URL: this service serves them itself. */
    WEB_APP_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** Directory for the SQLite file and the generated secrets key. Default ./data. */
    DATA_DIR: z.string().min(1).default('./data'),
    /** Unset: SQLite at DATA_DIR/payroute.sqlite. `sqlite:<path>` or `postgres://...`. */
    DATABASE_URL: z
      .string()
      .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:<path> or postgres://...')
      .optional(),
    /** SQLite only: `full` syncs the WAL at every COMMIT (a payment answered survives a power loss); `normal` only at
     *  checkpoints (faster; a machine crash may lose the last commits). Default full. */
    SQLITE_SYNCHRONOUS: z.enum(['full', 'normal']).default('full'),
    /** `sandbox` (test network, faucet allowed) or `live` (main network). Default sandbox. */
    ENVIRONMENT: z.enum(['sandbox', 'live']).default('sandbox'),
    /** At least 32 characters; the AES-256-GCM key for stored secrets is derived from it (HKDF-SHA256).
     *  Unset: generated once into DATA_DIR/secrets.key (sandbox only; required in live). */
    SECRETS_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    /** The key the data was sealed with before SECRETS_KEY changed: read only by `npm run cli -- secrets rotate`,
     *  which re-encrypts the data from it to SECRETS_KEY (README "Secrets"). Unset it once the rotation is done. */
    SECRETS_KEY_PREVIOUS: z.string().min(32, 'must be at least 32 characters').optional(),
    /** pino level. Default info. */
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Log destination: unset = stderr, or a file path. */
    LOG_FILE: z.string().min(1).optional(),
    /** `json` (one JSON object per line), `pretty` (lines for a person), or `auto`: pretty when the log goes to a
     *  terminal (stderr is one and LOG_FILE is unset), JSON lines otherwise. Default auto. */
    LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
    // --- Metrics (README "Metrics and logs"); GET /metrics is never public by default ---
    /** Bearer token that opens GET /metrics on each process's own port (and is then required on the metrics ports
     *  too). Unset: /metrics is not served on the main ports. RFC 6750 token characters, at least 16. */
    METRICS_TOKEN: z
      .string()
      .regex(/^[A-Za-z0-9._~+/-]{16,}=*$/, 'must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / -')
      .optional(),
    /** Port (on HOST) of a listener serving only the admin process's GET /metrics; unset: none. Keep it unexposed. */
    ADMIN_METRICS_PORT: port.optional(),
    /** Port (on HOST) of a listener serving only the proxy process's GET /metrics; unset: none. */
    PROXY_METRICS_PORT: port.optional(),
    /** JSON request body limit in bytes. Default 1 MB. */
    BODY_LIMIT_BYTES: whole.pipe(z.number().int().positive()).default(1_048_576),
    /** How long an authenticated API key stays cached; revocation takes effect within this. Max 1000 ms. */
    API_KEY_CACHE_MS: whole.pipe(z.number().int().min(0).max(1000)).default(1000),
    /** Lifetime of plan access tokens (JWT) in seconds. Default 1 day. */
    ACCESS_TOKEN_TTL_SECS: whole.pipe(z.number().int().positive()).default(86_400),
    /** Lifetime of OAuth access tokens (JWT) in seconds. Default 15 minutes: a connector refreshes; a revoked grant
     *  is refused at once anyway, since every use checks the grant. */
    OAUTH_ACCESS_TOKEN_TTL_SECS: whole.pipe(z.number().int().min(60).max(86_400)).default(900),
    /** The device flow's polling interval in seconds (RFC 8628 §3.2 `interval`); a faster poll is `slow_down`. Default 5. */
    OAUTH_DEVICE_POLL_INTERVAL_SECS: whole.pipe(z.number().int().min(1).max(60)).default(5),
    /** Device authorizations (POST /oauth/device_authorization, RFC 8628 §3.1) one client address may start per
     *  window (OAUTH_DEVICE_AUTH_WINDOW_SECS); past it, 429 with Retry-After. An IPv6 address counts by its /64. The
     *  address is the proxy's TCP peer (see TRUSTED_PROXY_HOPS). Counted in the database: the limit holds across
     *  every process. Default 30: with the default window (a device code's 600 s life) a household or office
     *  behind one address holds at most 30 live codes, far more than people starting a connector at once. */
    OAUTH_DEVICE_AUTH_LIMIT_PER_ADDRESS: whole.pipe(z.number().int().min(1).max(1_000_000)).default(30),
    /** Device authorizations one client (connector) may start per window, from all addresses together. It bounds the
     *  device codes an attacker with many addresses can make a connector hold; it can also be used up by one, which
     *  then blocks that connector's new device flows until the window ends: set it above the connector's real peak.
     *  Default 600 (one a second, sustained for the whole window). */
    OAUTH_DEVICE_AUTH_LIMIT_PER_CLIENT: whole.pipe(z.number().int().min(1).max(1_000_000)).default(600),
    /** The fixed window of both device authorization limits, in seconds (1 to 86400). Default 600, a device code's
     *  lifetime: the limits then bound the codes alive at once. */
    OAUTH_DEVICE_AUTH_WINDOW_SECS: whole.pipe(z.number().int().min(1).max(86_400)).default(600),
    /** RFC 7591 dynamic client registration (POST /oauth/register): anyone may register a public, unverified,
     *  commerce-only client, as an MCP host does on its first connection. `true` or `false`; default true in sandbox,
     *  false in live (where the operator registers connectors with the CLI, or a host names its Client ID Metadata
     *  Document). Off: /oauth/register is 404 and the discovery document has no registration_endpoint. */
    OAUTH_DYNAMIC_REGISTRATION: z.enum(['true', 'false']).optional(),
    /** Dynamic registrations one client address may make per 600-second window (an IPv6 address counts by its /64);
     *  past it, 429 with Retry-After and nothing stored. 20 to 100; default 20. */
    OAUTH_REGISTRATION_LIMIT_PER_ADDRESS: whole.pipe(z.number().int().min(20).max(100)).default(20),
    /** Reverse proxies (TLS terminators, balancers) in front of the payroute proxy that append the client address to
     *  X-Forwarded-For: the client address is then that header's entry this many from the right. Default 0: the
     *  client address is the proxy's TCP peer and any X-Forwarded-For a client sends is ignored. Set it to the exact
     *  number of hops you run: one too many lets a client choose its address. Used for the per-address limits. */
    TRUSTED_PROXY_HOPS: whole.pipe(z.number().int().min(0).max(10)).default(0),
    /** The consent and device pages sign the human out after this many seconds without a request. Default 15 min. */
    OAUTH_PAGE_SESSION_IDLE_SECS: whole.pipe(z.number().int().min(60).max(86_400)).default(900),
    /** Lifetime of initialize proofs in seconds. Default 1 hour. */
    PROOF_TTL_SECS: whole.pipe(z.number().int().positive()).default(3600),
    /** How long an Idempotency-Key and its stored answer are kept, in seconds. Default 1 day, at least 1 day: a
     *  client may retry a timed-out POST for that long and must still get the first answer, never a second effect. */
    IDEMPOTENCY_KEEP_SECS: whole.pipe(z.number().int().min(86_400, 'must be at least 86400 (one day)')).default(86_400),
    /** Time both processes allow a client, from connecting (or from the end of its previous request on a kept-alive
     *  connection), to send a whole request head; past it, 408 BCK.HTTP.0408 and the connection is closed. A client
     *  that trickles its headers would otherwise hold a connection (and its memory) for ever. Default 20 s. */
    HEADERS_TIMEOUT_MS: whole.pipe(z.number().int().min(500).max(600_000)).default(20_000),
    /** Time allowed to receive the body of a request for the admin process, once its headers are in (on the admin
     *  port, and forwarded by the proxy); past it, 408 BCK.HTTP.0408 and the connection is closed. Default 60 s, as
     *  ROUTER_REQUEST_BODY_TIMEOUT_MS: a 1 MB body (BODY_LIMIT_BYTES) then needs about 140 kbit/s. */
    ADMIN_BODY_TIMEOUT_MS: whole.pipe(z.number().int().min(500).max(3_600_000)).default(60_000),
    /** On SIGTERM/SIGINT a process stops accepting connections, answers /readyz 503 and gives the calls in flight
     *  this long to finish and be recorded before it cuts them and exits. Default 25 s: inside the 30 s most process
     *  managers (Kubernetes, Docker) wait before they kill. */
    SHUTDOWN_GRACE_MS: whole.pipe(z.number().int().min(0).max(600_000)).default(25_000),
    /** PostgreSQL connections each process may open (its pool's maximum). With several processes their sum, plus
     *  the CLI's and your tools', must stay under the server's max_connections (README "Running several proxies").
     *  Default 10. Ignored with SQLite. */
    DATABASE_POOL_MAX: whole.pipe(z.number().int().min(1).max(1000)).default(10),
    /** Longest one database statement may run, and longest a transaction may sit idle between its statements, before
     *  the database ends it; the process gives up on an answer that has not come this long plus 2 s later (a database
     *  that accepts connections but never answers) and drops that connection. A request that meets either is 503
     *  BCK.DATABASE.0001 with Retry-After, and nothing it did is half-written (the transaction is rolled back). On
     *  SQLite, how long a writer waits for another process's lock. Default 10 s. `npm run db:migrate` is not bounded. */
    DATABASE_STATEMENT_TIMEOUT_MS: whole.pipe(z.number().int().min(100).max(600_000)).default(10_000),
    /** Longest a request waits for a PostgreSQL connection: to open one, or for one of the pool's to be free. Past it,
     *  503 BCK.DATABASE.0001 with Retry-After. Default 5 s. Ignored with SQLite. */
    DATABASE_CONNECT_TIMEOUT_MS: whole.pipe(z.number().int().min(100).max(600_000)).default(5_000),
    /** Base of `docsUrl` in error envelopes. */
    DOCS_URL: z.url().default('https://github.com/payroute/payroute/blob/main/docs/errors.md'),

    // --- Payment router (proxy process); docs/architecture.md sections 4 and 5 ---
    /** Routing fee in basis points on top of the merchant price (x402 only). Default 500 (5%). */
    ROUTER_FEE_BPS: whole.pipe(z.number().int().min(0).max(10_000)).default(500),
    /** Address that receives the fee leg. Default: the operator wallet created at first start. */
    ROUTER_FEE_RECIPIENT: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'must be an EVM address')
      .optional(),
    /** Concurrent router calls per user before 429 BCK.ROUTER.0007, counted in each proxy process (each worker of
     *  PROXY_WORKERS, each replica): a user may have this many in flight per process. Default 10. */
    ROUTER_MAX_CONCURRENT_PER_USER: whole.pipe(z.number().int().positive()).default(10),
    /** Proxy processes `npm run start:proxy` runs (node:cluster workers sharing PROXY_PORT); 1 runs the proxy in
     *  the process itself. Default 1. */
    PROXY_WORKERS: whole.pipe(z.number().int().min(1).max(64)).default(1),
    /** Worker threads that make the payment signatures, off the event loop; 0 signs on it. Default 1. */
    ROUTER_SIGNING_THREADS: whole.pipe(z.number().int().min(0).max(64)).default(1),
    /** Upper bound on an x402 authorization's validBefore, seconds from now. Default 3600. At least 30: the official
     *  facilitator refuses an authorization whose validBefore is within 6 s at verify and again at settle, so a
     *  shorter window expires before the merchant can settle it, after the payment was recorded. */
    ROUTER_MAX_AUTH_TTL_SECS: whole.pipe(z.number().int().min(30).max(86_400)).default(3600),
    /** Comma-separated CAIP-2 networks the router may pay on; narrows the environment's own. Default: all of them. */
    ROUTER_FUNDED_NETWORKS: z
      .string()
      .regex(/^eip155:[0-9]+(,eip155:[0-9]+)*$/, 'must be eip155:<id>[,...]')
      .optional(),
    /** Comma-separated token addresses MPP charges may use. Default: the environment's USDC and EURC. */
    ROUTER_MPP_ASSETS: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}(,0x[0-9a-fA-F]{40})*$/, 'must be token addresses')
      .optional(),
    /** Allow upstreams on private/loopback addresses (tests, local development). Default false. */
    ROUTER_ALLOW_PRIVATE_TARGETS: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .default(false),
    /** Request body the streaming proxy buffers (a paid call re-sends it). Default 10 MB. */
    ROUTER_MAX_REQUEST_BYTES: whole.pipe(z.number().int().positive()).default(10 * 1_048_576),
    /** Time the proxy allows for receiving a router request's body once its headers are in; past it, 408
     *  BCK.HTTP.0408 and the connection is closed (a stalled upload must not hold its buffer and the user's
     *  concurrency slot). Default 60 s: a 10 MB body (ROUTER_MAX_REQUEST_BYTES) needs about 1.4 Mbit/s. */
    ROUTER_REQUEST_BODY_TIMEOUT_MS: whole.pipe(z.number().int().positive()).default(60_000),
    /** Largest merchant answer POST /router/route buffers (it is parsed and re-serialized into the JSON response,
     *  up to ~25x its size in heap); larger answers are refused (use /router/proxy, which streams). Default 1 MiB. */
    ROUTER_MAX_ROUTE_BODY_BYTES: whole.pipe(z.number().int().positive()).default(1_048_576),
    /** Largest upstream answer relayed. Default 100 MB. */
    ROUTER_MAX_RELAY_BYTES: whole.pipe(z.number().int().positive()).default(100 * 1_048_576),
    /** Idle time allowed between upstream body chunks. Default 30 s. */
    ROUTER_STREAM_IDLE_MS: whole.pipe(z.number().int().positive()).default(30_000),
    /** Total time an upstream exchange may take. Default 5 min. */
    ROUTER_STREAM_MAX_MS: whole.pipe(z.number().int().positive()).default(300_000),
    /** Age after which the admin process releases a mode B fee leg still reserved (its paid call's recording never
     *  happened: a database error, a stop mid-call). Longer than any paid call can last. Default 1 h, at least 10 min. */
    ROUTER_FEE_SWEEP_AFTER_SECS: whole.pipe(z.number().int().min(600)).default(3600),
    // --- Settlement (docs/architecture.md, "Settlement backends") ---
    /** `ledger`: the internal token ledger (a wallet is funded by the sandbox faucet; nothing touches a chain). `rpc`:
     *  balances are read from the token contracts on chain, payments reserve against them, and orders and fee legs are
     *  submitted on chain by the operator wallet. Default ledger in sandbox, rpc in live (where the faucet cannot
     *  exist, so the ledger could never pay). */
    SETTLEMENT_BACKEND: z.enum(['ledger', 'rpc']).optional(),
    /** JSON-RPC endpoint of Base Sepolia (chain 84532, the sandbox network), for SETTLEMENT_BACKEND=rpc. Operator
     *  configuration only: no caller ever supplies a chain URL. */
    RPC_URL_84532: z.url({ protocol: /^https?$/ }).optional(),
    /** JSON-RPC endpoint of Base (chain 8453, the live network), for SETTLEMENT_BACKEND=rpc. */
    RPC_URL_8453: z.url({ protocol: /^https?$/ }).optional(),
    /** How long an on-chain balance read is used before it is read again (a payment reserves against it minus what is
     *  authorized and unsettled). Money sent away from a wallet outside payroute is noticed within this. Default 2 s. */
    CHAIN_BALANCE_TTL_MS: whole.pipe(z.number().int().min(0).max(60_000)).default(2000),
    /** Time allowed for one JSON-RPC request; reads are retried with backoff. Default 10 s. */
    CHAIN_RPC_TIMEOUT_MS: whole.pipe(z.number().int().min(100).max(120_000)).default(10_000),
    /** Time an order's request (or a fee collection) waits for its transaction to be mined; past it the order is
     *  answered 503 with nothing credited, and the admin process finishes it from the chain later (credited if the
     *  transaction is mined, dropped once its authorizations expired). Default 60 s. */
    CHAIN_CONFIRM_TIMEOUT_MS: whole.pipe(z.number().int().min(1000).max(600_000)).default(60_000),
    /** How often the admin process reconciles unsettled payments with the chain (used -> Settled, unused after
     *  validBefore -> Expired and their caps released), collects fee legs and finishes unconfirmed orders. Default 5 s. */
    CHAIN_RECONCILE_INTERVAL_MS: whole.pipe(z.number().int().min(100).max(3_600_000)).default(5000),
    /** Upstream connect timeout. Default 10 s. */
    ROUTER_CONNECT_TIMEOUT_MS: whole.pipe(z.number().int().positive()).default(10_000),
    /** Upstream response-headers timeout. Default 30 s. */
    ROUTER_HEADERS_TIMEOUT_MS: whole.pipe(z.number().int().positive()).default(30_000),
  })
  .refine((c) => !(c.ENVIRONMENT === 'live' && c.SECRETS_KEY === undefined), {
    path: ['SECRETS_KEY'],
    message: 'is required when ENVIRONMENT=live',
    // Run even when other keys are wrong, so every problem is reported at once (zod skips refinements otherwise).
    when: () => true,
  })
  .refine(
    (c) => {
      const backend = c.SETTLEMENT_BACKEND ?? (c.ENVIRONMENT === 'live' ? 'rpc' : 'ledger');
      if (backend !== 'rpc') return true;
      return (c.ENVIRONMENT === 'live' ? c.RPC_URL_8453 : c.RPC_URL_84532) !== undefined;
    },
    {
      path: ['SETTLEMENT_BACKEND'],
      message: "rpc needs the JSON-RPC URL of the environment's chain (RPC_URL_84532 in sandbox, RPC_URL_8453 in live)",
      when: () => true,
    },
  )
  // `npm start` runs both processes with one environment: each listener needs a port of its own (0 picks a free one).
  .refine(
    (c) => {
      const set = (p: unknown): p is number => typeof p === 'number' && p !== 0;
      const metrics = [c.ADMIN_METRICS_PORT, c.PROXY_METRICS_PORT].filter(set);
      const ports = [c.ADMIN_PORT, c.PROXY_PORT].filter(set);
      return metrics.every((m, i) => !ports.includes(m) && metrics.indexOf(m) === i);
    },
    {
      path: ['ADMIN_METRICS_PORT'],
      message: 'ADMIN_PORT, PROXY_PORT, ADMIN_METRICS_PORT and PROXY_METRICS_PORT must all differ',
      when: () => true,
    },
  )
  // The sweep must not release a fee leg whose paid call may still be relaying its answer: longer than the whole
  // exchange can last (connect, then ROUTER_STREAM_MAX_MS), with a minute to spare.
  .refine(
    (c) =>
      typeof c.ROUTER_FEE_SWEEP_AFTER_SECS !== 'number' ||
      typeof c.ROUTER_STREAM_MAX_MS !== 'number' ||
      typeof c.ROUTER_CONNECT_TIMEOUT_MS !== 'number' ||
      c.ROUTER_FEE_SWEEP_AFTER_SECS * 1000 >= c.ROUTER_CONNECT_TIMEOUT_MS + c.ROUTER_STREAM_MAX_MS + 60_000,
    {
      path: ['ROUTER_FEE_SWEEP_AFTER_SECS'],
      message: 'must exceed ROUTER_CONNECT_TIMEOUT_MS + ROUTER_STREAM_MAX_MS by at least 60 s',
      when: () => true,
    },
  );

export type RawConfig = z.infer<typeof ConfigSchema>;

export type Config = RawConfig & {
  adminUrl: string;
  publicUrl: string;
  /** WEB_APP_URL without a trailing slash, or publicUrl. */
  webAppUrl: string;
  dataDir: string;
  database: { kind: 'sqlite'; path: string } | { kind: 'postgresql'; url: string };
  /** OAUTH_DYNAMIC_REGISTRATION, or its environment's default (sandbox: on, live: off). */
  oauthDynamicRegistration: boolean;
  /** SETTLEMENT_BACKEND, or its environment's default. */
  settlement: { backend: 'ledger' } | { backend: 'rpc'; rpcUrl: string };
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * HOST as the host part of a derived URL. A wildcard bind address (0.0.0.0, ::, as in the container) is not an
 * address to connect to or to put in a JWT issuer: the derived URLs use loopback instead. IPv6 needs brackets.
 */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Parses the environment; throws ConfigError listing every problem at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset", as in most .env files.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`));
  }
  const c = parsed.data;
  const dataDir = resolve(c.DATA_DIR);
  const url = c.DATABASE_URL;
  const database: Config['database'] =
    url === undefined
      ? { kind: 'sqlite', path: resolve(dataDir, 'payroute.sqlite') }
      : url.startsWith('sqlite:')
        ? { kind: 'sqlite', path: resolve(url.slice('sqlite:'.length)) }
        : { kind: 'postgresql', url };
  const rpcUrl = c.ENVIRONMENT === 'live' ? c.RPC_URL_8453 : c.RPC_URL_84532;
  const backend = c.SETTLEMENT_BACKEND ?? (c.ENVIRONMENT === 'live' ? 'rpc' : 'ledger');
  // The refinement above guarantees the URL when the backend is rpc.
  const settlement: Config['settlement'] =
    backend === 'rpc' && rpcUrl !== undefined ? { backend: 'rpc', rpcUrl } : { backend: 'ledger' };
  const publicUrl = (c.PUBLIC_URL ?? `http://${urlHost(c.HOST)}:${c.PROXY_PORT}`).replace(/\/$/, '');
  return {
    ...c,
    dataDir,
    database,
    settlement,
    oauthDynamicRegistration:
      (c.OAUTH_DYNAMIC_REGISTRATION ?? (c.ENVIRONMENT === 'sandbox' ? 'true' : 'false')) === 'true',
    adminUrl: c.ADMIN_URL ?? `http://${urlHost(c.HOST)}:${c.ADMIN_PORT}`,
    publicUrl,
    webAppUrl: c.WEB_APP_URL?.replace(/\/$/, '') ?? publicUrl,
  };
}

/** For process entry points: print every problem and exit non-zero. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
