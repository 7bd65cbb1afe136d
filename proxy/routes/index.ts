import { RouteTable } from '../http/route-table.js';
import type { RouterDeps } from './deps.js';

/** The proxy's own routes (the payment router). Each module adds its paths to the table. */
export function buildRouterRoutes(_deps: RouterDeps): RouteTable {
  return new RouteTable();
}
