import type { Middleware } from 'koa';
import { settleUnreadBody } from '../../shared/unread-body.js';
import type { AdminState } from '../http/state.js';

/**
 * Outermost, so it sees every answer's final status (the catch point's, a page's or an OAuth endpoint's own error
 * included) before Koa writes its head: a body still arriving behind an answer is drained or the connection closed
 * (shared/unread-body.ts), whichever route or refusal answered it.
 */
export function unreadBody(): Middleware<AdminState> {
  return async (ctx, next) => {
    await next();
    if (ctx.respond === false || ctx.headerSent) return;
    settleUnreadBody(ctx.req, ctx.res, ctx.status);
  };
}
