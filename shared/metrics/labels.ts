// Every label value of every metric comes from a set declared here. Prometheus keeps one time series per
// combination of label values, for as long as the process runs: a raw path, an id or any text a caller chose would
// mint a series per request and exhaust the memory of both this process and the server that scrapes it. So each
// label has a closed set, and `bounded` maps anything outside it to `other` (a value outside the set is a bug in a
// hook, or a caller probing; either way it must not create a series).
import { NETWORKS } from '../assets.js';
import { type ErrorCode, catalogue } from '../errors/catalogue.js';

export const OTHER = 'other';
export type Other = typeof OTHER;

/** `value` when it is one of `allowed`, else `other`. */
export function bounded<T extends string>(allowed: ReadonlySet<T>, value: unknown): T | Other {
  return typeof value === 'string' && allowed.has(value as T) ? (value as T) : OTHER;
}

// --- HTTP (both processes) ---

export const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route label of a request no route took (404, 405, a malformed target). */
export const ROUTE_UNMATCHED = 'unmatched';
/** The proxy's route label of a request it forwarded to the admin process (which counts it by its own route). */
export const ROUTE_FORWARDED = 'forwarded';
/** The path /metrics is served at, on the main port (with METRICS_TOKEN) and on the metrics port. */
export const METRICS_PATH = '/metrics';

/**
 * The route templates of this process, as its route table declares them (`/api/v1/agents/:agentId`): registered
 * once at start, so a template the router reports is checked against the declarations rather than trusted.
 */
const routeTemplates = new Set<string>([ROUTE_UNMATCHED, ROUTE_FORWARDED, METRICS_PATH]);

export function registerRouteTemplates(templates: Iterable<string>): void {
  for (const t of templates) routeTemplates.add(t);
}

export const routeLabel = (template: unknown): string => bounded(routeTemplates, template);

/** An HTTP status as written by this process: a three-digit code (at most 500 values), never a caller's text. */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : OTHER;
}

// --- Router payments (proxy) ---

export const PAYMENT_PROTOCOLS = new Set(['x402_v1', 'x402_v2', 'mpp', 'none'] as const);
export type PaymentProtocol = typeof PAYMENT_PROTOCOLS extends ReadonlySet<infer T> ? T : never;

/**
 * How a router payment ended. `issued`: signed and recorded, its settlement not known yet (mode A hands the
 * credential to the caller; mode B's merchant sent no receipt); `settled`: the merchant's receipt; `rejected`: the
 * merchant answered the paid call with 402 again; `unanswered`: the paid call got no answer (the merchant leg
 * stays spent); `refused`: refused before anything was paid, with its error code.
 */
export const PAYMENT_OUTCOMES = new Set(['issued', 'settled', 'rejected', 'unanswered', 'refused'] as const);
export type PaymentOutcome = typeof PAYMENT_OUTCOMES extends ReadonlySet<infer T> ? T : never;

/** The error catalogue's codes (shared/errors/catalogue.ts), and `none` for an outcome that is no refusal. */
export const ERROR_CODES: ReadonlySet<ErrorCode | 'none'> = new Set([
  ...(Object.keys(catalogue) as ErrorCode[]),
  'none' as const,
]);

/** Asset label by token address (any case), over both environments' known tokens: its symbol. */
const ASSET_SYMBOLS: ReadonlyMap<string, string> = new Map(
  Object.values(NETWORKS).flatMap((n) => n.assets.map((a) => [a.address.toLowerCase(), a.symbol] as const)),
);

export const assetLabel = (address: string): string => ASSET_SYMBOLS.get(address.toLowerCase()) ?? OTHER;

// --- Outbound calls to merchants (proxy) ---

/** The merchant's status class, or `failed` (no answer: connect, timeout, reset) / `refused` (our limits). */
export const UPSTREAM_OUTCOMES = new Set(['1xx', '2xx', '3xx', '4xx', '5xx', 'failed', 'refused'] as const);

export function statusClassLabel(status: number): string {
  return bounded(UPSTREAM_OUTCOMES, `${Math.floor(status / 100)}xx`);
}

// --- Caches ---

/**
 * `api_key`, `oauth_token`: the credential caches (shared/auth); `delegation_snapshot`: the router's cap snapshots;
 * `wallet_key`, `org_wallet_key`: decrypted custodial keys; `router_claims`: the router's in-process requestId
 * claims (a hit is a duplicate caught without the database); `idempotency_key`: stored answers of Idempotency-Key
 * POSTs (a hit is a replay).
 */
export const CACHE_NAMES = new Set([
  'api_key',
  'oauth_token',
  'delegation_snapshot',
  'wallet_key',
  'org_wallet_key',
  'router_claims',
  'idempotency_key',
] as const);
export type CacheName = typeof CACHE_NAMES extends ReadonlySet<infer T> ? T : never;

// --- Database (shared/db/sql.ts) ---

export const DIALECTS = new Set(['sqlite', 'postgresql'] as const);
export const TRANSACTION_OUTCOMES = new Set(['commit', 'rollback'] as const);
