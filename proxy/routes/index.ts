import { RouteTable } from '../http/route-table.js';
import type { RouterContext } from '../../shared/router/context.js';
import { paymentRoutes } from './payments.js';
import { streamRoutes } from './stream.js';

/** The proxy's own routes (the payment router). Each module adds its paths to the table. */
export function buildRouterRoutes(rc: RouterContext): RouteTable {
  const table = new RouteTable();
  paymentRoutes(table, rc);
  streamRoutes(table, rc);
  return table;
}
