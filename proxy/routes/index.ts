import type { RouterServices } from '../../shared/router/services.js';
import { PUBLIC } from '../../shared/auth/route-callers.js';
import type { Lifecycle } from '../../shared/lifecycle.js';
import { readiness } from '../../shared/readiness.js';
import { RouteTable } from '../http/route-table.js';
import { sendJson } from '../respond.js';
import { paymentRoutes } from './payments.js';
import { streamRoutes } from './stream.js';

/** The proxy's own routes: its probes and the payment router. Each module adds its paths to the table. */
export function buildRouterRoutes(services: RouterServices, lifecycle: Lifecycle): RouteTable {
  const table = new RouteTable();
  table.add('GET', '/healthz', PUBLIC, async ({ res }) => sendJson(res, 200, { status: 'ok', service: 'proxy' }));
  table.add('GET', '/readyz', PUBLIC, async ({ res }) => {
    const answer = await readiness('proxy', lifecycle, services.ctx);
    sendJson(res, answer.status, answer.body);
  });
  paymentRoutes(table, services);
  streamRoutes(table, services);
  return table;
}
