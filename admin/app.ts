import Koa from 'koa';
import { createAuthenticator } from '../shared/accounts/api-keys.js';
import type { ServiceContext } from '../shared/context.js';
import { createTokenSigner } from '../shared/keys/signing-keys.js';
import type { AdminDeps } from './deps.js';
import type { AdminState } from './http/state.js';
import { authenticate } from './middleware/authenticate.js';
import { correlation } from './middleware/correlation.js';
import { errorHandler } from './middleware/error-handler.js';
import { jsonBody } from './middleware/json-body.js';
import { buildRouter } from './routes/index.js';

export function buildAdminApp(ctx: ServiceContext): { app: Koa<AdminState>; deps: AdminDeps } {
  const deps: AdminDeps = { ctx, auth: createAuthenticator(ctx), signer: createTokenSigner(ctx) };
  const app = new Koa<AdminState>({ proxy: false });
  app.silent = true;
  const router = buildRouter(deps);
  app.use(correlation(ctx.log));
  app.use(errorHandler(ctx.config.DOCS_URL));
  app.use(authenticate(deps.auth));
  app.use(jsonBody(ctx.config.BODY_LIMIT_BYTES));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, deps };
}
