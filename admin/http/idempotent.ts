// The Koa side of Idempotency-Key (shared/idempotency): runs an idempotent route's handler at most once per key.
// It runs after the route's authorization and body parsing (the key is scoped to the caller, and the body is part
// of the fingerprint), and answers a replay, a mismatch or a request still in progress without running the
// handler at all.
import type { ServiceContext } from '../../shared/context.js';
import { AppError, toEnvelope } from '../../shared/errors/app-error.js';
import { fingerprint } from '../../shared/idempotency/fingerprint.js';
import { IDEMPOTENCY_HEADER, IdempotencyKey, REPLAYED_HEADER } from '../../shared/idempotency/key.js';
import { type StoredAnswer, abandon, claim, complete } from '../../shared/idempotency/store.js';
import type { AdminRouterContext } from './state.js';
import { parse } from './validate.js';

export interface IdempotencyScope {
  /** Method and route pattern. */
  readonly scope: string;
  readonly method: string;
  readonly route: string;
  readonly userId: string;
}

export interface IdempotencyRunner {
  run(ctx: AdminRouterContext, scope: IdempotencyScope, handler: () => Promise<void>): Promise<void>;
}

/** Headers the framework derives from the body: never stored, Koa sets them again on a replay. */
const DERIVED = new Set(['content-type', 'content-length']);

/** Headers the handler set (not those middleware set before it, like the correlation id). */
function headersSetSince(ctx: AdminRouterContext, before: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.response.headers)) {
    if (DERIVED.has(name) || value === undefined || before[name] === value) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

function replay(ctx: AdminRouterContext, answer: StoredAnswer): void {
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.set(REPLAYED_HEADER, 'true');
  // An answer without a body is stored as '' (no JSON text is empty).
  if (answer.body !== '') ctx.body = JSON.parse(answer.body);
}

export function idempotencyRunner(svc: ServiceContext): IdempotencyRunner {
  return {
    async run(ctx, scope, handler) {
      const raw = ctx.req.headers[IDEMPOTENCY_HEADER];
      if (raw === undefined) return handler();
      const key = parse(IdempotencyKey, Array.isArray(raw) ? raw.join(', ') : raw, `header.${IDEMPOTENCY_HEADER}`);
      const claimed = await claim(svc, {
        userId: scope.userId,
        scope: scope.scope,
        key,
        fingerprint: fingerprint({
          method: scope.method,
          route: scope.route,
          params: ctx.params,
          rawBody: ctx.request.rawBody ?? '',
        }),
      });
      if (claimed.type === 'replay') return replay(ctx, claimed.answer);
      if (claimed.type === 'mismatch') {
        throw new AppError('BCK.IDEMPOTENCY.0001', {
          details: 'this Idempotency-Key was used with a different request',
        });
      }
      if (claimed.type === 'inProgress') {
        throw new AppError('BCK.IDEMPOTENCY.0002', { details: 'a request with this Idempotency-Key is still running' });
      }

      const before = { ...ctx.response.headers };
      try {
        await handler();
      } catch (err) {
        // A 4xx is this request's answer: built here (not by the catch point) so the stored envelope is the one
        // the client saw, and every replay repeats it exactly.
        if (err instanceof AppError && err.httpStatus < 500) {
          ctx.status = err.httpStatus;
          ctx.body = toEnvelope(err, ctx.state.correlationId, svc.config.DOCS_URL);
        } else {
          // Not an answer to the request (5xx, a crash): give the key back so the client can retry with it.
          await abandon(svc, claimed.id).catch((e: unknown) =>
            ctx.state.log.error({ err: e }, 'could not release an idempotency key'),
          );
          throw err;
        }
      }
      if (ctx.status >= 500) {
        await abandon(svc, claimed.id);
        return;
      }
      const body = ctx.body === undefined || ctx.body === null ? '' : JSON.stringify(ctx.body);
      const answer = { status: ctx.status, headers: headersSetSince(ctx, before), body };
      // The effect has happened: if its answer cannot be stored, the client still gets it, and the key stays
      // claimed (409 in progress) until it expires rather than being freed for a second effect.
      const stored = await complete(svc, claimed.id, answer).catch((err: unknown) => {
        ctx.state.log.error({ err }, 'could not store an idempotent answer');
        return true;
      });
      if (!stored) ctx.state.log.warn('idempotency key vanished before its answer was stored');
    },
  };
}
