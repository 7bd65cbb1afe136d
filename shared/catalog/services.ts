// The public side of the catalog: what agents search to choose a service, by slug, never by upstream. The catalog is
// curated by the operator (tens to a few thousand entries), so a search reads the entries of a category (or all of
// them) and matches the text in the process, the same way on SQLite and PostgreSQL.
import type { ServiceContext } from '../context.js';
import { CatalogEntry } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import { Slug } from './requests.js';
import { publicService } from './responses.js';

/** What the well-known document lists at most (a catalog larger than this is searched with the API). */
export const DOCUMENT_LIMIT = 1000;

export type PublicService = ReturnType<typeof publicService>;

const matches = (s: PublicService, needle: string): boolean =>
  [s.slug, s.name, s.description ?? ''].some((f) => f.toLowerCase().includes(needle));

/** The services matching `query` (slug, name, description; case-insensitive) in `category`, by slug, a page of them. */
export async function searchServices(
  ctx: ServiceContext,
  filter: { query?: string | undefined; category?: string | undefined },
  page: { page: number; offset: number },
): Promise<{ services: PublicService[]; total: number; page: number; offset: number }> {
  const where = filter.category === undefined ? {} : { category: filter.category };
  const rows = await ctx.db.em().find(CatalogEntry, where, { orderBy: { slug: 'asc' } });
  const needle = filter.query?.toLowerCase() ?? '';
  const all = rows.map(publicService).filter((s) => needle === '' || matches(s, needle));
  const start = (page.page - 1) * page.offset;
  return { services: all.slice(start, start + page.offset), total: all.length, page: page.page, offset: page.offset };
}

/** One service by slug; an unknown (or malformed) slug is 404 BCK.CATALOG.0001. */
export async function getService(ctx: ServiceContext, slug: string): Promise<PublicService> {
  const entry = Slug.safeParse(slug).success ? await ctx.db.em().findOne(CatalogEntry, { slug }) : null;
  if (entry === null)
    throw new AppError('BCK.CATALOG.0001', { details: `no service ${JSON.stringify(slug.slice(0, 64))}` });
  return publicService(entry);
}

/** The categories in use, each with how many services it holds. */
export async function listCategories(
  ctx: ServiceContext,
): Promise<{ categories: { category: string; count: number }[] }> {
  const rows = await ctx.db.em().find(CatalogEntry, { category: { $ne: null } }, { orderBy: { category: 'asc' } });
  const counts = new Map<string, number>();
  for (const r of rows) if (r.category != null) counts.set(r.category, (counts.get(r.category) ?? 0) + 1);
  return { categories: [...counts].map(([category, count]) => ({ category, count })) };
}

/** `/.well-known/agent-services-catalog.json`: the whole catalog (up to DOCUMENT_LIMIT services), by slug. */
export async function catalogDocument(ctx: ServiceContext) {
  const rows = await ctx.db.em().find(CatalogEntry, {}, { orderBy: { slug: 'asc' }, limit: DOCUMENT_LIMIT });
  return { issuer: ctx.config.publicUrl, services: rows.map(publicService) };
}
