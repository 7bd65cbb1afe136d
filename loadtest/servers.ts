// The counterparts of the benchmark and the load-test kit, each in a child process of its own (so no scenario shares
// an event loop with the load generator or with the thing it is compared against). Started by loadtest/processes.ts
// as `node --import tsx loadtest/servers.ts <role>`; prints one line `{"ready":"<role>","port":N}` (the same
// readiness line as the real processes) and serves on 127.0.0.1, on BENCH_PORT (0 or absent: a free port), until
// SIGTERM.
//
//   upstream     a free JSON answer (the relay's target): what every relay scenario ends at.
//   passthrough  the baseline of the free relay: a bare http-proxy-3 pass-through with a keep-alive agent to
//                BENCH_UPSTREAM_URL (http-proxy-3 without an explicit keep-alive agent opens a connection per request).
//   merchant     the official @x402/express v2 merchant (test/support/merchants/x402-v2.ts) on its stub chain;
//                BENCH_MINT (JSON array of addresses) are given USDC and EURC on that chain.
import { Agent, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyServer } from 'http-proxy-3';
import { StubChain } from '../test/support/merchants/chain.js';
import { MERCHANT_V2, assetOf } from '../test/support/merchants/fixtures.js';
import { startX402V2Merchant } from '../test/support/merchants/x402-v2.js';

/** The merchant's price: 0.01 USDC (6 decimals). */
export const PRICE = 10_000n;
const CHAIN_ID = 84532;
const PORT = Number(process.env.BENCH_PORT ?? '0');

function ready(role: string, port: number): void {
  process.stdout.write(`${JSON.stringify({ ready: role, port })}\n`);
}

function serve(role: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void {
  const server = createServer({ keepAliveTimeout: 60_000 }, handler);
  server.listen(PORT, '127.0.0.1', () => ready(role, (server.address() as AddressInfo).port));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

const FREE_BODY = Buffer.from(JSON.stringify({ free: true, answer: 42, note: 'a small free JSON answer' }));

async function main(): Promise<void> {
  const role = process.argv[2];
  if (role === 'upstream') {
    serve(role, (req, res) => {
      // Drain any request body, then answer.
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': FREE_BODY.length });
        res.end(FREE_BODY);
      });
    });
    return;
  }
  if (role === 'passthrough') {
    const target = process.env.BENCH_UPSTREAM_URL;
    if (target === undefined) throw new Error('BENCH_UPSTREAM_URL is required');
    const agent = new Agent({ keepAlive: true, maxSockets: 256 });
    const proxy = createProxyServer({ target, agent });
    proxy.on('error', (_err, _req, res) => {
      if ('writeHead' in res && !res.headersSent) res.writeHead(502);
      res.end();
    });
    serve(role, (req, res) => proxy.web(req, res));
    return;
  }
  if (role === 'merchant') {
    const usdc = assetOf('sandbox', 'USDC');
    const eurc = assetOf('sandbox', 'EURC');
    const chain = new StubChain(CHAIN_ID, [usdc, eurc]);
    for (const a of JSON.parse(process.env.BENCH_MINT ?? '[]') as string[]) {
      chain.mint(usdc.address, a, 10n ** 15n);
      chain.mint(eurc.address, a, 10n ** 15n);
    }
    const m = await startX402V2Merchant({
      chain,
      payTo: MERCHANT_V2,
      usdcAmount: PRICE.toString(),
      usdc,
      eurc,
      port: PORT,
    });
    ready(role, Number(new URL(m.url).port));
    process.on('SIGTERM', () => {
      void m.close().then(() => process.exit(0));
    });
    return;
  }
  throw new Error(`unknown role ${role}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});
