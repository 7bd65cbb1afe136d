import type { ParameterizedContext } from 'koa';
import type { Principal } from '../../shared/accounts/api-keys.js';
import type { Logger } from '../../shared/log.js';

/** What middleware puts on ctx.state for the routes. */
export interface AdminState {
  correlationId: string;
  log: Logger;
  principal?: Principal;
}

export type AdminContext = ParameterizedContext<AdminState>;

/** The authenticated caller; the auth middleware guarantees it under /api/v1. */
export function principalOf(ctx: AdminContext): Principal {
  const p = ctx.state.principal;
  if (p === undefined) throw new Error('route mounted without authentication');
  return p;
}
