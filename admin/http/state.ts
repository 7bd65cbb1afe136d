import type { RouterContext } from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { Logger } from '../../shared/log.js';

/** What middleware puts on ctx.state for the routes. (The caller is not here: each route's declaration resolves it
 * and hands it to the handler, so no handler can read a caller that was never checked.) */
export interface AdminState {
  correlationId: string;
  log: Logger;
}

export type AdminContext = ParameterizedContext<AdminState>;

/** The context a matched route's handler gets (with `params`). */
export type AdminRouterContext = RouterContext<AdminState>;
