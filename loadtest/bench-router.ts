// `npm run bench:router`: the router's load benchmark. The k6 binary cannot be installed here, so this
// Node runner executes the scenarios of loadtest/k6/*.ts against a stack it starts itself, and reports each one as
// a RATIO against a baseline measured in the same run (never pass/fail on times):
//
//   1. relay  free relay through ALL /api/v1/router/proxy (GET and POST alternating) vs a bare http-proxy-3
//             pass-through with a keep-alive agent, same upstream, same request bytes            (target >= 0.9x)
//   2. paid   POST /api/v1/router/route paying the official @x402/express v2 merchant vs the official @x402
//             client (@x402/core x402Client + @x402/evm ExactEvmScheme) paying it directly       (target >= 0.8x)
//   3. mint   mode A POST /api/v1/router/payments vs signAuthorization (native) on one core       (target >= 0.35x)
//   4. rss    the proxy's VmRSS across 200k free relays (bounded caches): start / peak / end
//   5. commerce       POST /api/v1/router/commerce/route (a connector's OAuth access token: ES256 JWT, `at+jwt`, of a
//                     `commerce` grant) vs POST /api/v1/router/route (the user's API key), same user, same paid
//                     merchant: the credential check is the only difference                     (target >= 0.95x)
//   6. commerce-free  the same two routes to the free upstream (the probe's answer is relayed: no payment, no
//                     database write), so the credential check is a far larger share of each call (target >= 0.95x)
//   7. mcp            the call_service tool through /mcp (an access token for the MCP resource) vs the commerce route
//                     (an access token for the API), same connector, user and paid merchant      (target >= 0.9x)
//   8. org    POST /api/v1/router/route through a delegation paying from an organization wallet (share, group and
//             membership checked and locked, the group budget charged before the cap) vs the same member's route
//             through a delegation paying from their own wallet, same paid merchant             (target >= 0.9x)
//
// Everything targets 127.0.0.1, every loop is bounded in time and count, and the run stops by itself. Each
// counterpart runs in its own process (loadtest/servers.ts) so no side shares an event loop with the load
// generator or with the side it is compared against. CPU time of every process is read from /proc per phase, to
// say where the time goes.
//
// Knobs (environment): BENCH_SECONDS (measured seconds per side of a scenario, default 20), BENCH_ONLY
// (comma list of relay,paid,commerce,commerce-free,mcp,org,mint,workers,rss), BENCH_DB (sqlite | postgresql, default sqlite),
// BENCH_RSS_REQUESTS (default 200000), BENCH_RSS_MAX_SECONDS (default 120), BENCH_RELAY_CONNECTIONS (default 32),
// BENCH_PAID_CONCURRENCY (default 16; the commerce scenario's too), BENCH_COMMERCE_FREE_CONCURRENCY (default 32),
// BENCH_MINT_CONCURRENCY (default 16), BENCH_ROUNDS (A B B A rounds per scenario, default 3), BENCH_JSON (write
// the figures there).
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { AutocannonResult } from 'autocannon';
import { Pool } from 'undici';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type TransferAuthorization, randomNonce, signAuthorization } from '../shared/protocols/eip3009.js';
import { faucet } from '../shared/settlement/token-ledger.js';
import type { DbKind } from '../test/support/databases.js';
import { MERCHANT_V2 } from '../test/support/merchants/fixtures.js';
import { createGroupBudget, createOrgDelegation, orgSpendingWorld } from '../test/support/org-spending.js';
import type { Stack } from '../test/support/stack.js';
import {
  cannon as cannonRun,
  closedLoop,
  mcpCallService,
  mcpSession,
  mintCall,
  mintTarget,
  relayRequests,
  routeCall,
} from './load.js';
import { type Child, killAll, startChild } from './processes.js';
import { type Sink, percentile } from './stats.js';
import { FREE_PORTS, USDC, type World, startWorld } from './world.js';

// --- knobs ------------------------------------------------------------------------------------------------------

function num(name: string, dflt: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`${name} must be a number in [${min}, ${max}]`);
  return v;
}

const SECONDS = num('BENCH_SECONDS', 20, 2, 120);
const WARMUP = Math.max(1, Math.min(3, SECONDS / 5));
const ROUNDS = num('BENCH_ROUNDS', 3, 1, 10);
const RSS_REQUESTS = num('BENCH_RSS_REQUESTS', 200_000, 1_000, 1_000_000);
const RSS_MAX_SECONDS = num('BENCH_RSS_MAX_SECONDS', 120, 5, 300);
const RELAY_CONNECTIONS = num('BENCH_RELAY_CONNECTIONS', 32, 1, 512);
const PAID_CONCURRENCY = num('BENCH_PAID_CONCURRENCY', 16, 1, 256);
const MINT_CONCURRENCY = num('BENCH_MINT_CONCURRENCY', 16, 1, 256);
const COMMERCE_FREE_CONCURRENCY = num('BENCH_COMMERCE_FREE_CONCURRENCY', 32, 1, 256);
const DB: DbKind = process.env.BENCH_DB === 'postgresql' ? 'postgresql' : 'sqlite';
const ONLY = new Set(
  (process.env.BENCH_ONLY ?? 'relay,paid,commerce,commerce-free,mcp,org,mint,workers,rss')
    .split(',')
    .map((s) => s.trim()),
);
/** Hard ceiling of the whole run: whatever happens, children are killed and the process exits. */
const WATCHDOG_MS = 12 * 60_000;

const CHAIN_ID = 84532;
const NETWORK = 'eip155:84532';

// --- /proc sampling ---------------------------------------------------------------------------------------------

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** User + system CPU time of a process, in milliseconds (/proc/<pid>/stat fields 14 and 15). */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process in KiB (/proc/<pid>/status VmRSS). */
function rssKiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? Number.NaN : Number(m[1]);
  } catch {
    return Number.NaN;
  }
}

/** Busy and total CPU time of the whole machine, in milliseconds (/proc/stat line `cpu`). */
function machineMs(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: ((total - idle) * 1000) / CLOCK_TICKS, total: (total * 1000) / CLOCK_TICKS };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

type Pids = Record<string, number>;

/**
 * CPU milliseconds each process spent while `fn` ran, plus `other` (machine busy time not spent by these
 * processes: anything else running on the machine) and `idle` (machine capacity left unused).
 */
async function withCpu<T>(pids: Pids, fn: () => Promise<T>): Promise<{ value: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const m0 = machineMs();
  const value = await fn();
  const m1 = machineMs();
  const cpu: Record<string, number> = Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid) - (before[k] ?? 0)]),
  );
  const ours = Object.values(cpu).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  cpu.other = Math.max(0, m1.busy - m0.busy - ours);
  cpu.idle = Math.max(0, m1.total - m0.total - (m1.busy - m0.busy));
  return { value, cpu };
}

// --- load loops -------------------------------------------------------------------------------------------------

interface Side {
  ok: number;
  failed: number;
  seconds: number;
  latencies: number[];
  cpu: Record<string, number>;
  /** True when `latencies` holds autocannon's [p50, p99] pairs (one per run) rather than every call's latency. */
  summarised?: boolean;
  firstError?: string | undefined;
}

const emptySide = (): Side => ({ ok: 0, failed: 0, seconds: 0, latencies: [], cpu: {} });

function addCpu(into: Record<string, number>, more: Record<string, number>): void {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] ?? 0) + v;
}

/** What a side's calls report: counted into the side, each success's latency kept. */
function sideSink(side: Side): Sink {
  return {
    ok: (ms) => {
      side.ok += 1;
      side.latencies.push(ms);
    },
    fail: (error) => {
      side.failed += 1;
      side.firstError ??= error;
    },
  };
}

/** A closed loop (loadtest/load.ts) as a side: `concurrency` workers calling `once` back to back for `seconds`. */
async function sideLoop(seconds: number, concurrency: number, once: () => Promise<void>): Promise<Side> {
  const side = emptySide();
  side.seconds = await closedLoop(seconds, concurrency, once, sideSink(side));
  return side;
}

/** One autocannon run at RELAY_CONNECTIONS, stopped after `seconds` (or `amount` requests, whichever first). */
function cannon(
  url: string,
  requests: Parameters<typeof cannonRun>[1],
  seconds: number,
  amount?: number,
): Promise<AutocannonResult> {
  return cannonRun(url, requests, {
    seconds,
    connections: RELAY_CONNECTIONS,
    ...(amount === undefined ? {} : { amount }),
  });
}

function sideOfCannon(r: AutocannonResult, cpu: Record<string, number>): Side {
  const side = emptySide();
  side.ok = r['2xx'];
  side.failed = r.non2xx + r.errors + r.timeouts;
  side.seconds = r.duration;
  side.cpu = cpu;
  side.latencies = [r.latency.p50, r.latency.p99];
  side.summarised = true;
  return side;
}

function merge(into: Side, more: Side): void {
  into.ok += more.ok;
  into.failed += more.failed;
  into.seconds += more.seconds;
  into.latencies.push(...more.latencies);
  if (more.summarised === true) into.summarised = true;
  addCpu(into.cpu, more.cpu);
  into.firstError ??= more.firstError;
}

const rate = (s: Side): number => (s.seconds > 0 ? s.ok / s.seconds : 0);

/**
 * Both sides in ROUNDS rounds of A B B A (SECONDS per side in all), after a warm-up of both. This VM's CPU speed
 * drifts within minutes (BENCHMARKS.md); short alternating phases put the same drift on both sides.
 */
async function abba(
  warm: (s: number) => Promise<unknown>,
  run: { base: (s: number) => Promise<Side>; router: (s: number) => Promise<Side> },
) {
  await warm(WARMUP);
  const base = emptySide();
  const router = emptySide();
  const phase = SECONDS / (2 * ROUNDS);
  for (let r = 0; r < ROUNDS; r += 1) {
    merge(base, await run.base(phase));
    merge(router, await run.router(phase));
    merge(router, await run.router(phase));
    merge(base, await run.base(phase));
  }
  return { base, router };
}

// --- report -----------------------------------------------------------------------------------------------------

interface Row {
  scenario: string;
  /** Baseline CPU per op / router CPU per op, over our processes: the ratio the throughput would tend to on an otherwise idle, CPU-bound machine. */
  cpuRatio: number;
  baseline: string;
  router: string;
  baseRate: number;
  routerRate: number;
  ratio: number;
  target: number;
  base: Side;
  routerSide: Side;
  unit: string;
}

const rows: Row[] = [];
const notes: string[] = [];
let rssReport: Record<string, unknown> | undefined;

function latencyOf(s: Side): { p50: number; p99: number } {
  if (s.summarised === true) {
    // autocannon sides carry [p50, p99] per run: report the worse run's figures
    const p50 = Math.max(...s.latencies.filter((_, i) => i % 2 === 0));
    const p99 = Math.max(...s.latencies.filter((_, i) => i % 2 === 1));
    return { p50, p99 };
  }
  const sorted = [...s.latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

function cpuPerOp(s: Side): string {
  const total = s.ok + s.failed;
  if (total === 0) return '-';
  return Object.entries(s.cpu)
    .filter(([, ms]) => Number.isFinite(ms) && ms > 0)
    .map(([k, ms]) => `${k} ${((ms * 1000) / total).toFixed(0)}`)
    .join(', ');
}

/** How the machine's capacity was used during a side: ours, others', idle (in % of all cores' time). */
function machineShare(s: Side): string {
  const idle = s.cpu.idle ?? Number.NaN;
  const other = s.cpu.other ?? Number.NaN;
  const ours = Object.entries(s.cpu)
    .filter(([k, v]) => k !== 'idle' && k !== 'other' && Number.isFinite(v))
    .reduce((a, [, v]) => a + v, 0);
  const cap = ours + other + idle;
  if (!(cap > 0)) return '-';
  const pct = (v: number) => `${((100 * v) / cap).toFixed(0)}%`;
  return `ours ${pct(ours)}, other ${pct(other)}, idle ${pct(idle)}`;
}

/** CPU milliseconds our own processes spent per op during a side (other and idle excluded). */
function ourCpuPerOp(s: Side): number {
  const ours = Object.entries(s.cpu)
    .filter(([k, v]) => k !== 'idle' && k !== 'other' && Number.isFinite(v))
    .reduce((a, [, v]) => a + v, 0);
  const ops = s.ok + s.failed;
  return ops > 0 ? ours / ops : Number.NaN;
}

function record(row: Omit<Row, 'ratio' | 'baseRate' | 'routerRate' | 'cpuRatio'>): void {
  const baseRate = rate(row.base);
  const routerRate = rate(row.routerSide);
  const cpuRatio = ourCpuPerOp(row.base) / ourCpuPerOp(row.routerSide);
  const full = { ...row, baseRate, routerRate, ratio: baseRate > 0 ? routerRate / baseRate : 0, cpuRatio };
  rows.push(full);
  const l = (s: Side) => latencyOf(s);
  log(
    `  ${row.scenario}: router ${routerRate.toFixed(0)} ${row.unit} (${row.routerSide.ok} ok, ${row.routerSide.failed} failed, ` +
      `p50 ${l(row.routerSide).p50.toFixed(2)} ms, p99 ${l(row.routerSide).p99.toFixed(2)} ms) | baseline ${baseRate.toFixed(0)} ${row.unit} ` +
      `(${row.base.ok} ok, ${row.base.failed} failed) | ratio ${full.ratio.toFixed(2)}x (target >= ${row.target}x)`,
  );
  log(`    CPU µs per op — router side: ${cpuPerOp(row.routerSide)}; baseline side: ${cpuPerOp(row.base)}`);
  log(`    machine — router side: ${machineShare(row.routerSide)}; baseline side: ${machineShare(row.base)}`);
  log(
    `    CPU per op (our processes): router ${ourCpuPerOp(row.routerSide).toFixed(3)} ms, baseline ${ourCpuPerOp(row.base).toFixed(3)} ms ` +
      `-> CPU-normalised ratio ${cpuRatio.toFixed(2)}x`,
  );
  if (row.routerSide.firstError !== undefined) log(`    first router error: ${row.routerSide.firstError}`);
  if (row.base.firstError !== undefined) log(`    first baseline error: ${row.base.firstError}`);
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

// --- scenarios --------------------------------------------------------------------------------------------------

/** The seeded stack of loadtest/world.ts, with the benchmark's own baselines. */
interface BenchWorld extends World {
  passthrough: Child;
  baselineKey: `0x${string}`;
  /** A member of an organization with two delegations, when the org scenario runs. */
  org: OrgBench | undefined;
}

interface OrgBench {
  apiKey: string;
  /** Pays from the member's own (funded) wallet. */
  ownDelegationId: string;
  /** Pays from the organization wallet shared with the member's group, charged to the group's budget. */
  orgDelegationId: string;
  /** The wallets the merchant's chain must hold funds for. */
  payers: string[];
}

async function scenarioRelay(w: BenchWorld, pids: Pids): Promise<void> {
  log(
    `relay: free relay through /api/v1/router/proxy vs bare http-proxy-3, ${RELAY_CONNECTIONS} connections, GET/POST alternating`,
  );
  const reqs = relayRequests(w.apiKey, w.delegationId, w.upstream.url);
  const side = (url: string) => async (s: number) => {
    const { value, cpu } = await withCpu(pids, () => cannon(url, reqs, s));
    return sideOfCannon(value, cpu);
  };
  const { base, router } = await abba(
    async (s) => {
      await cannon(w.passthrough.url, reqs, s);
      await cannon(w.stack.proxyUrl, reqs, s);
    },
    { base: side(w.passthrough.url), router: side(w.stack.proxyUrl) },
  );
  record({
    scenario: 'relay',
    baseline: 'http-proxy-3 pass-through (keep-alive agent)',
    router: 'ALL /api/v1/router/proxy (free upstream)',
    base,
    routerSide: router,
    target: 0.9,
    unit: 'req/s',
  });
}

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

async function scenarioPaid(w: BenchWorld, pids: Pids): Promise<void> {
  log(
    `paid: POST /api/v1/router/route vs the official @x402 client, ${PAID_CONCURRENCY} in flight, same @x402/express v2 merchant`,
  );
  const proxyPool = new Pool(w.stack.proxyUrl, { connections: PAID_CONCURRENCY, keepAliveTimeout: 60_000 });
  const merchantPool = new Pool(w.merchant.url, { connections: PAID_CONCURRENCY, keepAliveTimeout: 60_000 });
  const paidUrl = `${w.merchant.url}/paid`;
  let n = 0;
  const runId = randomUUID().slice(0, 8);

  const viaRouter = async (): Promise<void> => {
    n += 1;
    await routeCall(proxyPool, {
      path: '/api/v1/router/route',
      bearer: w.apiKey,
      body: { requestId: `paid-${runId}-${n}`, delegationId: w.delegationId, url: paidUrl, method: 'GET' },
      paid: true,
    });
  };

  // The official buyer: x402Client + ExactEvmScheme (viem account), driven as @x402/fetch's wrapper drives it
  // (@x402/fetch is not installed here): 402 -> getPaymentRequiredResponse -> createPaymentPayload ->
  // encodePaymentSignatureHeader -> retry -> processPaymentResult. It is told to prefer USDC, as the router does.
  const preferUsdc = (_v: number, reqs: PaymentRequirements[]): PaymentRequirements => {
    const usdc = reqs.find((r) => getAddress(r.asset) === USDC.address);
    const pick = usdc ?? reqs[0];
    if (pick === undefined) throw new Error('no requirements');
    return pick;
  };
  const client = new x402Client(preferUsdc).register(
    NETWORK,
    new ExactEvmClientScheme(privateKeyToAccount(w.baselineKey)),
  );
  const http = new x402HTTPClient(client);
  const direct = async (): Promise<void> => {
    const first = await merchantPool.request({ path: '/paid', method: 'GET' });
    const firstText = await first.body.text();
    if (first.statusCode !== 402) throw new Error(`merchant answered ${first.statusCode} unpaid`);
    let firstBody: unknown;
    try {
      firstBody = JSON.parse(firstText);
    } catch {
      firstBody = undefined;
    }
    const required = http.getPaymentRequiredResponse((name) => header(first.headers, name), firstBody);
    const payload = await http.createPaymentPayload(required);
    const paid = await merchantPool.request({
      path: '/paid',
      method: 'GET',
      headers: http.encodePaymentSignatureHeader(payload),
    });
    const paidText = await paid.body.text();
    if (paid.statusCode !== 200)
      throw new Error(`merchant answered ${paid.statusCode} paid: ${paidText.slice(0, 300)}`);
    const result = await http.processPaymentResult(payload, (name) => header(paid.headers, name), paid.statusCode);
    if (result.settleResponse?.success !== true) throw new Error('no settlement receipt');
  };

  try {
    const { base, router } = await abba(
      async (s) => {
        await sideLoop(s, PAID_CONCURRENCY, direct);
        await sideLoop(s, PAID_CONCURRENCY, viaRouter);
      },
      {
        base: async (s) => {
          const { value, cpu } = await withCpu(pids, () => sideLoop(s, PAID_CONCURRENCY, direct));
          return { ...value, cpu };
        },
        router: async (s) => {
          const { value, cpu } = await withCpu(pids, () => sideLoop(s, PAID_CONCURRENCY, viaRouter));
          return { ...value, cpu };
        },
      },
    );
    record({
      scenario: 'paid',
      baseline: '@x402/core x402Client + @x402/evm ExactEvmScheme, paying directly',
      router: 'POST /api/v1/router/route (probe, claim, reserve, sign, re-send, record)',
      base,
      routerSide: router,
      target: 0.8,
      unit: 'paid calls/s',
    });
  } finally {
    await Promise.all([proxyPool.close(), merchantPool.close()]);
  }
}

/**
 * Scenarios 5 and 6: the commerce route (a connector's access token; the delegation is its grant's) against
 * /router/route (the user's API key naming the user's own erc4337 delegation), same user and wallet, same target,
 * a fresh requestId per call on both. `paid`: the @x402/express merchant, each call paid and settled; `free`: the
 * free upstream, each answer relayed unpaid (no payment, no database write), where the credential check weighs most.
 */
/** One POST route of the router as a bench side: its path, the bearer it presents, and its body's own fields. */
interface RouteSide {
  readonly path: string;
  readonly bearer: string;
  readonly fields: Record<string, string>;
  /** What the row says this side is. */
  readonly label: string;
}

/**
 * Two router routes to the same upstream, the same number of calls in flight, A B B A rounds: the baseline side and
 * the router side differ only in what the scenario says. Every answer is checked (a paid call must have settled).
 */
async function compareRoutes(
  w: BenchWorld,
  pids: Pids,
  o: { scenario: string; paid: boolean; concurrency: number; base: RouteSide; router: RouteSide; target: number },
): Promise<void> {
  const pool = new Pool(w.stack.proxyUrl, { connections: o.concurrency, keepAliveTimeout: 60_000 });
  const url = o.paid ? `${w.merchant.url}/paid` : `${w.upstream.url}/free`;
  const runId = randomUUID().slice(0, 8);
  let n = 0;
  const call = (side: RouteSide) => async (): Promise<void> => {
    n += 1;
    await routeCall(pool, {
      path: side.path,
      bearer: side.bearer,
      body: { requestId: `${o.scenario}-${runId}-${n}`, ...side.fields, url, method: 'GET' },
      paid: o.paid,
    });
  };
  try {
    const upstream = o.paid ? 'paid merchant' : 'free upstream';
    await compareCalls(pids, {
      scenario: o.scenario,
      concurrency: o.concurrency,
      target: o.target,
      unit: o.paid ? 'paid calls/s' : 'calls/s',
      base: { label: `${o.base.label} (${upstream})`, call: call(o.base) },
      router: { label: `${o.router.label} (${upstream})`, call: call(o.router) },
    });
  } finally {
    await pool.close();
  }
}

/** One side of a comparison: what the row calls it, and one call of it (throws unless the answer is right). */
interface CallSide {
  readonly label: string;
  readonly call: () => Promise<void>;
}

/**
 * Two ways of making the same call, the same number in flight, A B B A rounds, recorded as one row. One call of
 * each first: a refusal (a grant, a cap, a budget, a declaration) stops here, not as a 0x ratio.
 */
async function compareCalls(
  pids: Pids,
  o: { scenario: string; concurrency: number; target: number; unit: string; base: CallSide; router: CallSide },
): Promise<void> {
  await o.base.call();
  await o.router.call();
  const { base, router } = await abba(
    async (s) => {
      await sideLoop(s, o.concurrency, o.base.call);
      await sideLoop(s, o.concurrency, o.router.call);
    },
    {
      base: async (s) => {
        const { value, cpu } = await withCpu(pids, () => sideLoop(s, o.concurrency, o.base.call));
        return { ...value, cpu };
      },
      router: async (s) => {
        const { value, cpu } = await withCpu(pids, () => sideLoop(s, o.concurrency, o.router.call));
        return { ...value, cpu };
      },
    },
  );
  record({
    scenario: o.scenario,
    baseline: o.base.label,
    router: o.router.label,
    base,
    routerSide: router,
    target: o.target,
    unit: o.unit,
  });
}

async function scenarioCommerce(w: BenchWorld, pids: Pids, variant: 'paid' | 'free'): Promise<void> {
  const token = w.commerce?.token;
  if (token === undefined) throw new Error('no commerce token');
  const paid = variant === 'paid';
  const concurrency = paid ? PAID_CONCURRENCY : COMMERCE_FREE_CONCURRENCY;
  const scenario = paid ? 'commerce' : 'commerce-free';
  log(
    `${scenario}: POST /api/v1/router/commerce/route (OAuth access token) vs POST /api/v1/router/route (API key), ` +
      `${concurrency} in flight, same ${paid ? 'paid @x402/express v2 merchant' : 'free upstream'}`,
  );
  await compareRoutes(w, pids, {
    scenario,
    paid,
    concurrency,
    target: 0.95,
    base: {
      path: '/api/v1/router/route',
      bearer: w.apiKey,
      fields: { delegationId: w.delegationId },
      label: "POST /api/v1/router/route with the user's API key",
    },
    router: {
      path: '/api/v1/router/commerce/route',
      bearer: token,
      fields: {},
      label: 'POST /api/v1/router/commerce/route with a commerce access token',
    },
  });
}

/**
 * Scenario 7 (`mcp`): the call_service tool through /mcp (an access token for the MCP resource, one session; each
 * call a JSON-RPC tools/call answered with the tool result) against POST /router/commerce/route (an access token for
 * the API) to the same paid merchant, same user, same connector, 16 in flight. The tool is the commerce route behind
 * another door: the difference is the door (the session read, JSON-RPC, the SDK server and transport per request).
 */
async function scenarioMcp(w: BenchWorld, pids: Pids): Promise<void> {
  const access = w.commerce;
  if (access === undefined) throw new Error('no commerce token');
  log(
    `mcp: call_service through /mcp (MCP access token) vs POST /api/v1/router/commerce/route (API access token), ` +
      `${PAID_CONCURRENCY} in flight, same paid @x402/express v2 merchant`,
  );
  const pool = new Pool(w.stack.proxyUrl, { connections: PAID_CONCURRENCY, keepAliveTimeout: 60_000 });
  const url = `${w.merchant.url}/paid`;
  const runId = randomUUID().slice(0, 8);
  let n = 0;
  try {
    const session = await mcpSession(pool, access.mcpToken);
    await compareCalls(pids, {
      scenario: 'mcp',
      concurrency: PAID_CONCURRENCY,
      target: 0.9,
      unit: 'paid calls/s',
      base: {
        label: 'POST /api/v1/router/commerce/route with a commerce access token (paid merchant)',
        call: async () => {
          n += 1;
          await routeCall(pool, {
            path: '/api/v1/router/commerce/route',
            bearer: access.token,
            body: { requestId: `mcp-base-${runId}-${n}`, url, method: 'GET' },
            paid: true,
          });
        },
      },
      router: {
        label: 'the call_service tool through /mcp with an MCP access token (paid merchant)',
        call: async () => {
          n += 1;
          await mcpCallService(pool, { token: access.mcpToken, session, url, paid: true, id: n });
        },
      },
    });
  } finally {
    await pool.close();
  }
}

/**
 * org: a member's paid route through a delegation paying from an organization wallet (the share, group and
 * membership checked and locked, the group budget charged before the cap, one more journal row) vs the same
 * member's route through a delegation paying from their own wallet.
 */
async function scenarioOrg(w: BenchWorld, pids: Pids): Promise<void> {
  const org = w.org;
  if (org === undefined) throw new Error('no organization world');
  log(
    `org: POST /api/v1/router/route through an organization-wallet delegation vs through the member's own-wallet delegation, ${PAID_CONCURRENCY} in flight, same paid @x402/express v2 merchant`,
  );
  await compareRoutes(w, pids, {
    scenario: 'org',
    paid: true,
    concurrency: PAID_CONCURRENCY,
    target: 0.9,
    base: {
      path: '/api/v1/router/route',
      bearer: org.apiKey,
      fields: { delegationId: org.ownDelegationId },
      label: "POST /api/v1/router/route, a member's own-wallet delegation",
    },
    router: {
      path: '/api/v1/router/route',
      bearer: org.apiKey,
      fields: { delegationId: org.orgDelegationId },
      label: 'POST /api/v1/router/route, the same member through an organization wallet and group budget',
    },
  });
}

async function scenarioMint(w: BenchWorld, pids: Pids): Promise<void> {
  log(
    `mint: mode A POST /api/v1/router/payments, ${MINT_CONCURRENCY} in flight, vs signAuthorization (native) on one core`,
  );
  const target = await mintTarget(w.merchant.url);

  const pool = new Pool(w.stack.proxyUrl, { connections: MINT_CONCURRENCY, keepAliveTimeout: 60_000 });
  const runId = randomUUID().slice(0, 8);
  let n = 0;
  const mint = async (): Promise<void> => {
    n += 1;
    await mintCall(pool, { apiKey: w.apiKey, delegationId: w.delegationId, target, requestId: `mint-${runId}-${n}` });
  };

  // Baseline: one signature at a time on this process's one core, nothing else running.
  const key = generatePrivateKey();
  const from = privateKeyToAccount(key).address;
  const sign = async (s: number): Promise<Side> => {
    const side = emptySide();
    const started = performance.now();
    const deadline = started + s * 1000;
    const now = BigInt(Math.floor(Date.now() / 1000));
    while (performance.now() < deadline) {
      for (let i = 0; i < 100; i += 1) {
        const auth: TransferAuthorization = {
          from,
          to: MERCHANT_V2,
          value: 10_000n,
          validAfter: now - 600n,
          validBefore: now + 300n,
          nonce: randomNonce(),
        };
        signAuthorization(key, auth, USDC, CHAIN_ID);
        side.ok += 1;
      }
    }
    side.seconds = (performance.now() - started) / 1000;
    return side;
  };

  try {
    // The signer and the router alternate like the other scenarios (ROUNDS rounds of A B B A), so the machine's
    // drift falls on both; until 02:45 UTC on 2026-11-22 the signer was measured once, for 5 s, before the mints.
    const { base: signedSide, router: mintedSide } = await abba(
      async (s) => {
        await sign(Math.min(0.5, s));
        await sideLoop(s, MINT_CONCURRENCY, mint);
      },
      {
        base: async (s) => {
          const { value, cpu } = await withCpu(pids, () => sign(s));
          return { ...value, cpu };
        },
        router: async (s) => {
          const { value, cpu } = await withCpu(pids, () => sideLoop(s, MINT_CONCURRENCY, mint));
          return { ...value, cpu };
        },
      },
    );
    record({
      scenario: 'mint',
      baseline: 'signAuthorization (native secp256k1) in-process, one signature at a time',
      router: 'POST /api/v1/router/payments (mode A, requestId set: claim, reserve, ledger, sign)',
      base: signedSide,
      routerSide: mintedSide,
      target: 0.35,
      unit: 'per s',
    });
  } finally {
    await pool.close();
  }
}

/** The processes a proxy started (node:cluster workers), whose CPU counts with it. */
function childPids(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

/**
 * Scenario 8 (`workers`): one proxy process (the stack's) against a second proxy started with PROXY_WORKERS=2 on
 * the same database, for paid routes and for mode A mints: what a second worker buys on this machine. Both sides
 * run the same calls; the ratio is 2 workers / 1 process. Meant for BENCH_DB=postgresql (SQLite serializes every
 * write on one file whatever the number of processes).
 */
async function scenarioWorkers(w: BenchWorld, pids: Pids): Promise<void> {
  log(
    `workers: one proxy process vs PROXY_WORKERS=2, paid routes (${PAID_CONCURRENCY} in flight) and mints (${MINT_CONCURRENCY})`,
  );
  const two = await w.stack.spawn('proxy', { PROXY_WORKERS: '2' });
  const twoPids: Pids = { ...pids, proxy2: two.child.pid ?? -1 };
  for (const [i, pid] of childPids(two.child.pid ?? -1).entries()) twoPids[`proxy2w${i}`] = pid;
  const paidUrl = `${w.merchant.url}/paid`;
  const target = await mintTarget(w.merchant.url);
  const runId = randomUUID().slice(0, 8);
  let n = 0;
  try {
    for (const kind of ['paid', 'mint'] as const) {
      const concurrency = kind === 'paid' ? PAID_CONCURRENCY : MINT_CONCURRENCY;
      const pools = [w.stack.proxyUrl, two.url].map(
        (url) => new Pool(url, { connections: concurrency, keepAliveTimeout: 60_000 }),
      );
      const call = (pool: Pool) => async (): Promise<void> => {
        n += 1;
        const requestId = `workers-${kind}-${runId}-${n}`;
        if (kind === 'mint')
          await mintCall(pool, { apiKey: w.apiKey, delegationId: w.delegationId, target, requestId });
        else
          await routeCall(pool, {
            path: '/api/v1/router/route',
            bearer: w.apiKey,
            body: { requestId, delegationId: w.delegationId, url: paidUrl, method: 'GET' },
            paid: true,
          });
      };
      const [onePool, twoPool] = pools as [Pool, Pool];
      try {
        const { base, router } = await abba(
          async (sec) => {
            await sideLoop(sec, concurrency, call(onePool));
            await sideLoop(sec, concurrency, call(twoPool));
          },
          {
            base: async (sec) => {
              const { value, cpu } = await withCpu(pids, () => sideLoop(sec, concurrency, call(onePool)));
              return { ...value, cpu };
            },
            router: async (sec) => {
              const { value, cpu } = await withCpu(twoPids, () => sideLoop(sec, concurrency, call(twoPool)));
              return { ...value, cpu };
            },
          },
        );
        record({
          scenario: `workers-${kind}`,
          baseline: `one proxy process: ${kind === 'paid' ? 'POST /api/v1/router/route' : 'mode A POST /api/v1/router/payments'}`,
          router: 'the same calls through a proxy with PROXY_WORKERS=2',
          base,
          routerSide: router,
          target: 1,
          unit: kind === 'paid' ? 'paid calls/s' : 'mints/s',
        });
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    }
  } finally {
    await two.stop();
  }
}

async function scenarioRss(w: BenchWorld): Promise<void> {
  log(`rss: proxy VmRSS across ${RSS_REQUESTS} free relays (capped at ${RSS_MAX_SECONDS} s)`);
  const pid = w.stack.pids.proxy;
  const samples: { t: number; kib: number }[] = [];
  const t0 = performance.now();
  const sample = () => samples.push({ t: (performance.now() - t0) / 1000, kib: rssKiB(pid) });
  sample();
  const start = rssKiB(pid);
  const timer = setInterval(sample, 250);
  let result: AutocannonResult;
  try {
    result = await cannon(
      w.stack.proxyUrl,
      relayRequests(w.apiKey, w.delegationId, w.upstream.url),
      RSS_MAX_SECONDS,
      RSS_REQUESTS,
    );
  } finally {
    clearInterval(timer);
  }
  sample();
  const atEnd = rssKiB(pid);
  // Idle a little: what stays resident once the burst is over (no GC is forced in the child).
  await new Promise((r) => setTimeout(r, 3000));
  const settled = rssKiB(pid);
  const peak = Math.max(...samples.map((s) => s.kib).filter(Number.isFinite));
  const done = result.requests.total;
  const firstHalf = samples.filter((s) => s.t <= (samples.at(-1)?.t ?? 0) / 2).map((s) => s.kib);
  const midPeak = Math.max(...firstHalf.filter(Number.isFinite));
  // The curve at each tenth of the run (MiB), to tell a plateau from a steady climb.
  const deciles = Array.from({ length: 11 }, (_, i) => {
    const at = samples[Math.min(samples.length - 1, Math.round((i / 10) * (samples.length - 1)))];
    return Number(((at?.kib ?? Number.NaN) / 1024).toFixed(1));
  });
  rssReport = {
    requestsAsked: RSS_REQUESTS,
    requestsDone: done,
    ok: result['2xx'],
    failed: result.non2xx + result.errors + result.timeouts,
    seconds: result.duration,
    capped: done < RSS_REQUESTS,
    startMiB: start / 1024,
    peakMiB: peak / 1024,
    peakFirstHalfMiB: midPeak / 1024,
    endMiB: atEnd / 1024,
    after3sIdleMiB: settled / 1024,
    curveMiB: deciles,
    samples: samples.length,
  };
  const mib = (k: number) => `${(k / 1024).toFixed(1)} MiB`;
  log(
    `  rss: ${done} requests (${result['2xx']} ok) in ${result.duration.toFixed(1)} s${done < RSS_REQUESTS ? ' (capped by time)' : ''}; ` +
      `VmRSS start ${mib(start)}, peak ${mib(peak)} (first half ${mib(midPeak)}), end ${mib(atEnd)}, after 3 s idle ${mib(settled)}`,
  );
  log(`  rss curve (MiB at each tenth of the run): ${deciles.join(' ')}`);
}

// --- main -------------------------------------------------------------------------------------------------------

/**
 * A member of an organization (tests' org-spending world: the organization, its group, a wallet shared with it, all
 * funded) with a group budget and a delegation paying from the organization wallet, and a delegation paying from
 * their own funded wallet. Limits far above what a run spends: neither the budget nor a cap refuses mid-run.
 */
async function orgBench(stack: Stack): Promise<OrgBench> {
  const world = await orgSpendingWorld(stack, undefined, { members: 1, funds: 10n ** 15n });
  const member = world.members[0]?.user;
  if (member === undefined) throw new Error('no member');
  await faucet(stack.ctx, member.walletAddress, USDC.address, 10n ** 15n);
  await createGroupBudget(world.admin, world.orgId, world.groupId, 100_000_000_000, { currency: 'usdc' });
  const orgDelegationId = await createOrgDelegation(member, world.walletId, 100_000_000_000, {
    currency: 'usdc',
    durationSecs: 86_400,
  });
  const own = await member.api.post<{ delegationId: string }>('/delegation/create', {
    provider: 'erc4337',
    spendingLimitCents: 100_000_000_000,
    durationSecs: 86_400,
    currency: 'usdc',
  });
  if (own.status !== 201) throw new Error(`delegation/create ${own.status}: ${own.text}`);
  return {
    apiKey: member.apiKey,
    ownDelegationId: own.body.delegationId,
    orgDelegationId,
    payers: [member.walletAddress, world.address],
  };
}

async function setup(): Promise<{ w: BenchWorld; pids: Pids }> {
  const baselineKey = generatePrivateKey();
  let org: OrgBench | undefined;
  const world = await startWorld({
    db: DB,
    ports: FREE_PORTS,
    commerce: ONLY.has('commerce') || ONLY.has('commerce-free') || ONLY.has('mcp'),
    payers: async (stack) => {
      org = ONLY.has('org') ? await orgBench(stack) : undefined;
      return [privateKeyToAccount(baselineKey).address, ...(org?.payers ?? [])];
    },
  });
  try {
    const passthrough = await startChild('passthrough', { BENCH_UPSTREAM_URL: world.upstream.url });
    const w: BenchWorld = { ...world, passthrough, baselineKey, org };
    const pids: Pids = {
      bench: process.pid,
      proxy: w.stack.pids.proxy,
      admin: w.stack.pids.admin,
      upstream: w.upstream.pid,
      passthrough: passthrough.pid,
      merchant: w.merchant.pid,
    };
    return { w, pids };
  } catch (err) {
    await world.stop();
    throw err;
  }
}

function writeJson(): void {
  const out = process.env.BENCH_JSON;
  if (out === undefined || out === '') return;
  const strip = (s: Side) => ({ ok: s.ok, failed: s.failed, seconds: s.seconds, cpuMs: s.cpu, ...latencyOf(s) });
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        settings: {
          SECONDS,
          DB,
          RELAY_CONNECTIONS,
          PAID_CONCURRENCY,
          COMMERCE_FREE_CONCURRENCY,
          MINT_CONCURRENCY,
          RSS_REQUESTS,
          RSS_MAX_SECONDS,
        },
        rows: rows.map((r) => ({ ...r, base: strip(r.base), routerSide: strip(r.routerSide) })),
        rss: rssReport,
        notes,
      },
      null,
      2,
    )}\n`,
  );
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    process.stderr.write('bench-router: watchdog fired, killing children\n');
    killAll('SIGKILL');
    process.exit(2);
  }, WATCHDOG_MS);
  watchdog.unref();
  const began = Date.now();
  const cpu = cpus()[0]?.model ?? 'unknown';
  log(
    `bench-router: ${new Date().toISOString()} | node ${process.version} | ${cpus().length} cores (${cpu}) | ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB | db ${DB} | ${SECONDS} s per side`,
  );
  const quiet = await (async () => {
    const m0 = machineMs();
    await new Promise((r) => setTimeout(r, 1000));
    const m1 = machineMs();
    return (m1.busy - m0.busy) / (m1.total - m0.total);
  })();
  log(
    `machine busy before start: ${(100 * quiet).toFixed(0)}%${quiet > 0.2 ? ' — NOT QUIET: something else is running; the figures will be disturbed' : ''}`,
  );
  notes.push(`machine busy before start: ${(100 * quiet).toFixed(0)}%`);
  const { w, pids } = await setup();
  log(
    `stack up: proxy ${w.stack.proxyUrl} (pid ${w.stack.pids.proxy}), admin pid ${w.stack.pids.admin}, upstream ${w.upstream.url}, merchant ${w.merchant.url}`,
  );
  try {
    if (ONLY.has('relay')) await scenarioRelay(w, pids);
    if (ONLY.has('paid')) await scenarioPaid(w, pids);
    if (ONLY.has('commerce')) await scenarioCommerce(w, pids, 'paid');
    if (ONLY.has('commerce-free')) await scenarioCommerce(w, pids, 'free');
    if (ONLY.has('mcp')) await scenarioMcp(w, pids);
    if (ONLY.has('org')) await scenarioOrg(w, pids);
    if (ONLY.has('mint')) await scenarioMint(w, pids);
    if (ONLY.has('workers')) await scenarioWorkers(w, pids);
    if (ONLY.has('rss')) await scenarioRss(w);
  } finally {
    await w.stop();
  }
  log('');
  log('| scenario | router | baseline | ratio | CPU-normalised ratio | target | reading |');
  log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    const verdict = r.ratio >= r.target ? 'reaches target' : 'BELOW target';
    log(
      `| ${r.scenario} | ${r.routerRate.toFixed(0)} ${r.unit} | ${r.baseRate.toFixed(0)} ${r.unit} | ${r.ratio.toFixed(2)}x | ` +
        `${r.cpuRatio.toFixed(2)}x | >= ${r.target}x | ${verdict} |`,
    );
  }
  if (rssReport !== undefined) log(`rss: ${JSON.stringify(rssReport)}`);
  writeJson();
  log(`bench-router: done in ${((Date.now() - began) / 1000).toFixed(0)} s`);
}

process.on('SIGINT', () => {
  killAll('SIGTERM');
  process.exit(130);
});

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench-router failed: ${String(err instanceof Error ? err.stack : err)}\n`);
    killAll('SIGKILL');
    process.exit(1);
  },
);
