import type { RouterServices } from '../../shared/router/services.js';
import { InvariantError } from '../../shared/errors/invariant.js';
import type { Lifecycle } from '../../shared/lifecycle.js';
import { readiness } from '../../shared/readiness.js';
import { PROXY_ROUTES, PROXY_ROUTE_LIST, type RouteDeclaration } from '../../shared/router/routes.js';
import { RouteTable } from '../http/route-table.js';
import { sendJson } from '../respond.js';
import { paymentRoutes } from './payments.js';
import { streamRoutes } from './stream.js';

/** The proxy's own routes: its probes and the payment router. Each module adds its declared routes to the table. */
export function buildRouterRoutes(services: RouterServices, lifecycle: Lifecycle): RouteTable {
  const table = new RouteTable();
  table.add(PROXY_ROUTES.health, async ({ res }) => sendJson(res, 200, { status: 'ok', service: 'proxy' }));
  table.add(PROXY_ROUTES.ready, async ({ res }) => {
    const answer = await readiness('proxy', lifecycle, services.ctx);
    sendJson(res, answer.status, answer.body);
  });
  paymentRoutes(table, services);
  streamRoutes(table, services);
  return servingAsDeclared(table, PROXY_ROUTE_LIST);
}

/**
 * The table serves exactly the declarations, in their order, each once: the admin's API description lists the
 * declarations, so a handler without one (or a declaration without a handler) would make the document lie. Thrown
 * while the proxy builds its table, so such a proxy never starts.
 */
export function servingAsDeclared(table: RouteTable, declared: readonly RouteDeclaration<unknown>[]): RouteTable {
  const served = table.routes().map((r) => r.declaration);
  for (const d of declared) {
    const count = served.filter((s) => s === d).length;
    if (count !== 1) throw new InvariantError(`the proxy route ${d.method} ${d.path} has ${count} handlers, not 1`);
  }
  for (const s of served) {
    if (!declared.includes(s)) throw new InvariantError(`the proxy route ${s.method} ${s.path} is not declared`);
  }
  if (served.some((s, i) => s !== declared[i])) throw new InvariantError('the proxy routes are not in declared order');
  return table;
}
