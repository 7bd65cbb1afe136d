import Koa from 'koa';
import { createCredentialResolver } from '../shared/auth/credential-resolver.js';
import type { ServiceContext } from '../shared/context.js';
import { createTokenSigner } from '../shared/keys/signing-keys.js';
import { type Lifecycle, createLifecycle } from '../shared/lifecycle.js';
import type { AdminDeps } from './deps.js';
import { idempotencyRunner } from './http/idempotent.js';
import type { AdminRoute } from './http/route.js';
import type { AdminState } from './http/state.js';
import { correlation } from './middleware/correlation.js';
import { errorHandler } from './middleware/error-handler.js';
import { exactPath } from './middleware/exact-path.js';
import { jsonBody } from './middleware/json-body.js';
import { httpMetrics, metricsRoute } from './middleware/metrics.js';
import { unreadBody } from './middleware/unread-body.js';
import { registerRouteTemplates } from '../shared/metrics/labels.js';
import { adminRoutes, mountRoutes } from './routes/index.js';

/** `lifecycle`: the serving process's (admin/server.ts); an app built only to read its routes gets its own. */
export function buildAdminApp(
  ctx: ServiceContext,
  lifecycle: Lifecycle = createLifecycle(),
): {
  app: Koa<AdminState>;
  deps: AdminDeps;
  routes: readonly AdminRoute[];
} {
  const signer = createTokenSigner(ctx);
  const deps: AdminDeps = { ctx, credentials: createCredentialResolver(ctx, signer), signer, lifecycle };
  const app = new Koa<AdminState>({ proxy: false });
  app.silent = true;
  const limits = { maxBytes: ctx.config.BODY_LIMIT_BYTES, timeoutMs: ctx.config.ADMIN_BODY_TIMEOUT_MS };
  const bodies = { json: jsonBody(limits), 'form-or-json': jsonBody(limits, ['json', 'form']) };
  const routes = adminRoutes(deps);
  // Each route authorizes its caller, then reads its body (admin/http/route.ts); what no route takes is answered
  // by the router's not-found step (admin/middleware/unmatched.ts).
  const router = mountRoutes(routes, {
    credentials: deps.credentials,
    readBody: (c, kind) => bodies[kind](c, async () => undefined),
    idempotency: idempotencyRunner(ctx),
  });
  registerRouteTemplates(routes.map((r) => r.path));
  app.use(unreadBody());
  app.use(httpMetrics());
  app.use(correlation(ctx.log));
  app.use(errorHandler(ctx.config.DOCS_URL));
  app.use(exactPath(deps.credentials));
  app.use(metricsRoute(ctx.config.METRICS_TOKEN));
  app.use(router.routes());
  return { app, deps, routes };
}
