import type { Middleware } from 'koa';
import { correlationId } from '../../shared/correlation.js';
import type { Logger } from '../../shared/log.js';
import type { AdminState } from '../http/state.js';

export function correlation(log: Logger): Middleware<AdminState> {
  return async (ctx, next) => {
    const id = correlationId(ctx.get('x-correlation-id') || ctx.get('x-request-id') || undefined);
    ctx.state.correlationId = id;
    ctx.state.log = log.child({ correlationId: id });
    ctx.set('x-correlation-id', id);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Number(process.hrtime.bigint() - started) / 1e6 },
        'request',
      );
    }
  };
}
