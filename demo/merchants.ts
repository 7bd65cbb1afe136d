// `npm run demo`: merchants to try the payment router on, beside a running `npm start`, on one local port
// (DEMO_PORT, default 4020). They settle on the service's own sandbox ledger (its database, read with the same
// configuration as `npm start`: .env, DATA_DIR, DATABASE_URL), so paying them is real in the only chain the sandbox
// has. Routing to a loopback address is what the router's SSRF guard refuses by default: the service must run with
// ROUTER_ALLOW_PRIVATE_TARGETS=true for the walkthrough, and only for it.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../config/index.js';
import { NETWORKS } from '../shared/assets.js';
import { openDb } from '../shared/db/orm.js';
import { emSql } from '../shared/db/sql.js';
import { PATHS, PAYEES, PRICE_ATOMIC, demoApp } from './app.js';
import { type DemoSettlement, LedgerChain } from './ledger-chain.js';

const DemoEnv = z.object({ DEMO_PORT: z.coerce.number().int().min(1).max(65535).default(4020) });

async function main(): Promise<void> {
  const { DEMO_PORT } = DemoEnv.parse(process.env);
  const config = loadConfig(process.env);
  if (config.settlement.backend !== 'ledger')
    throw new DemoError('the demo settles on the sandbox ledger: it needs SETTLEMENT_BACKEND=ledger (the default)');
  const network = NETWORKS[config.ENVIRONMENT];
  const usdc = network.assets.find((a) => a.symbol === 'USDC');
  if (usdc === undefined) throw new Error(`no USDC in the ${config.ENVIRONMENT} asset table`);
  // Never create an empty SQLite file where npm start will look for its database.
  if (config.database.kind === 'sqlite' && !existsSync(config.database.path)) throw noDatabase(config.database);
  const db = await openDb(config.database, { poolMax: 2 }).catch(() => {
    throw noDatabase(config.database);
  });
  const sql = emSql(db.em(), db.dialect);
  // npm start creates the schema (it applies the migrations): without it there is no ledger to settle on.
  if (
    !(await sql.all('select id from router_payment limit 1').then(
      () => true,
      () => false,
    ))
  ) {
    await db.close();
    throw noDatabase(config.database);
  }
  const chain = new LedgerChain(sql, network.chainId, network.assets, logSettlement);
  const origin = `http://127.0.0.1:${DEMO_PORT}`;
  const server = demoApp(chain, usdc, origin).listen(DEMO_PORT, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' ? new DemoError(`port ${DEMO_PORT} is taken: set DEMO_PORT to a free one`) : err,
      ),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const price = `${Number(PRICE_ATOMIC) / 1e6} USDC`;
  process.stdout.write(
    [
      `demo merchants ready on ${url}, settling on the sandbox ledger of ${describe(config.database)}`,
      `  x402 v2      GET  ${url}${PATHS.v2}   ${price} to ${PAYEES.v2}`,
      `  x402 v1      GET  ${url}${PATHS.v1}   ${price} to ${PAYEES.v1}`,
      `  MPP          GET  ${url}${PATHS.mpp}        ${price} to ${PAYEES.mpp}`,
      `  x402 upto    POST ${url}${PATHS.upto}   up to ${price} (a scheme the router does not pay yet)`,
      `  free         GET  ${url}${PATHS.free}`,
      'The walkthrough in README.md uses:',
      `  DEMO=${url}`,
      'The service must run with ROUTER_ALLOW_PRIVATE_TARGETS=true to reach them (its SSRF guard refuses loopback).',
      '',
    ].join('\n'),
  );
  const stop = () => {
    server.closeAllConnections();
    server.close(() => void db.close().then(() => process.exit(0)));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** A start-up problem the person running the demo can fix: said in one line, no stack. */
class DemoError extends Error {}

const noDatabase = (d: ReturnType<typeof loadConfig>['database']) =>
  new DemoError(`no payroute database at ${describe(d)}: start the service first (npm start), with the same .env`);

function logSettlement(s: DemoSettlement): void {
  process.stdout.write(`settled ${s.value} (atomic) from ${s.from} to ${s.to}: payment ${s.paymentId}\n`);
}

const describe = (d: ReturnType<typeof loadConfig>['database']): string =>
  d.kind === 'sqlite' ? d.path : 'the PostgreSQL database of DATABASE_URL';

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DemoError) process.stderr.write(`npm run demo: ${err.message}\n`);
  else process.stderr.write(`npm run demo failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(2);
});
