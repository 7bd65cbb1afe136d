// The admin process's metrics: every request timed by its route template (the pattern @koa/router matched,
// checked against the declarations by shared/metrics/labels.ts), and GET /metrics on this port behind
// METRICS_TOKEN (shared/metrics/endpoint.ts; otherwise it falls through to the 404 any unknown path gets).
import type { Middleware } from 'koa';
import { observeRequest } from '../../shared/metrics/http.js';
import { METRICS_PATH } from '../../shared/metrics/labels.js';
import { mainPortAccess, metricsAnswer } from '../../shared/metrics/endpoint.js';
import type { AdminState } from '../http/state.js';

/** Outermost: the status is the one the error handler set, and the route the one the router matched. */
export function httpMetrics(): Middleware<AdminState> {
  return async (ctx, next) => {
    const http = observeRequest(ctx.method, ctx.res);
    try {
      await next();
    } finally {
      // @koa/router sets it on the context when a route (path and method) matched; a 404 or 405 leaves it unset.
      const matched: unknown = Reflect.get(ctx, '_matchedRoute');
      if (typeof matched === 'string') http.route = matched;
      else if (ctx.path === METRICS_PATH) http.route = METRICS_PATH;
    }
  };
}

/** Inside the error handler, so a refusal is the envelope. */
export function metricsRoute(token: string | undefined): Middleware<AdminState> {
  const access = mainPortAccess(token);
  return async (ctx, next) => {
    if (ctx.path !== METRICS_PATH || access.type === 'closed') return next();
    const answer = await metricsAnswer(access, ctx.method, ctx.get('authorization') || undefined);
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body;
  };
}
