// The API description and its reference page, public (README "API reference"): GET /api/v1/openapi.json, built
// once from both processes' route tables and the operation registry (admin/openapi/), and GET /docs, RapiDoc
// served by this service so the page needs nothing from another origin.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { PUBLIC } from '../../shared/auth/route-callers.js';
import { authorizationServerMetadata } from '../../shared/oauth/metadata.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import type { AdminDeps } from '../deps.js';
import { type AdminRoute, get } from '../http/route.js';
import { OPERATIONS } from '../openapi/operations.js';
import { RAPIDOC_PATH, REFERENCE_CSP, REFERENCE_PAGE } from '../openapi/reference-page.js';
import { listAdminRoutes, listProxyRoutes } from '../openapi/route-listing.js';
import { serviceVersion } from '../../shared/version.js';

const require = createRequire(import.meta.url);

/** A promise kept once it succeeded; a failure is not kept, so the next request tries again. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () => {
    kept ??= make().catch((err: unknown) => {
      kept = undefined;
      throw err;
    });
    return kept;
  };
}

/**
 * RapiDoc is a development dependency (its own dependency tree is large and only bundled into this one file):
 * `npm run build` copies the bundle to dist/assets/, which the image runs from; from the sources it is read from
 * node_modules.
 */
function rapidocBundle(): string {
  const copied = fileURLToPath(new URL('../../assets/rapidoc-min.js', import.meta.url));
  return existsSync(copied) ? copied : require.resolve('rapidoc/dist/rapidoc-min.js');
}

export function openApiRoutes({ ctx }: AdminDeps, adminTable: () => readonly AdminRoute[]): AdminRoute[] {
  const documentJson = once(async () => {
    const routes = [...listAdminRoutes(adminTable()), ...listProxyRoutes()];
    const built = buildOpenApiDocument(routes, OPERATIONS, {
      version: serviceVersion(),
      oauth: authorizationServerMetadata(ctx.config),
    });
    if (built.problems.length > 0) ctx.log.warn({ problems: built.problems }, 'the API description is incomplete');
    return JSON.stringify(built.document);
  });
  const rapidoc = once(() => readFile(rapidocBundle()));

  return [
    get('/api/v1/openapi.json', PUBLIC, async (c) => {
      c.type = 'application/json; charset=utf-8';
      c.set('cache-control', 'public, max-age=300');
      c.body = await documentJson();
    }),
    get('/docs', PUBLIC, async (c) => {
      c.type = 'text/html; charset=utf-8';
      c.set('content-security-policy', REFERENCE_CSP);
      c.set('x-frame-options', 'DENY');
      c.set('x-content-type-options', 'nosniff');
      c.set('referrer-policy', 'no-referrer');
      c.body = REFERENCE_PAGE;
    }),
    get(RAPIDOC_PATH, PUBLIC, async (c) => {
      c.type = 'text/javascript; charset=utf-8';
      c.set('cache-control', 'public, max-age=86400');
      c.set('x-content-type-options', 'nosniff');
      c.body = await rapidoc();
    }),
  ];
}
