// The catalog, public: parse -> call shared/catalog -> map. What an agent needs to choose a service, by slug; the
// upstream URL behind a slug is never shown.
import { PUBLIC } from '../../shared/auth/route-callers.js';
import { ServicesFilter } from '../../shared/catalog/requests.js';
import { catalogDocument, getService, listCategories, searchServices } from '../../shared/catalog/services.js';
import type { AdminDeps } from '../deps.js';
import { PageQuery } from '../http/pagination.js';
import { type AdminRoute, get } from '../http/route.js';
import { parse } from '../http/validate.js';

const ServicesQuery = PageQuery.extend(ServicesFilter.shape);

/** The API's catalog routes (mounted under /api/v1). */
export function catalogRoutes({ ctx: svc }: AdminDeps): AdminRoute[] {
  return [
    get('/catalog/services', PUBLIC, async (ctx) => {
      const q = parse(ServicesQuery, ctx.query);
      ctx.body = await searchServices(svc, q, q);
    }),
    get('/catalog/services/:slug', PUBLIC, async (ctx) => {
      ctx.body = await getService(svc, ctx.params.slug ?? '');
    }),
    get('/catalog/categories', PUBLIC, async (ctx) => {
      ctx.body = await listCategories(svc);
    }),
  ];
}

/** The catalog as one document, at the host's well-known location. */
export function catalogDocumentRoute({ ctx: svc }: AdminDeps): AdminRoute {
  return get('/.well-known/agent-services-catalog.json', PUBLIC, async (ctx) => {
    // The operator changes it with the CLI: a minute of staleness at most.
    ctx.set('cache-control', 'public, max-age=60');
    ctx.body = await catalogDocument(svc);
  });
}
