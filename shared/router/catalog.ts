// Slug resolution for the router: `slug` names a catalog entry's upstream base URL the caller never sees; `path` is
// appended segment by segment and may not climb out of the base (interface Errors rule 2). The catalog itself (its
// entries and their public listing) is shared/catalog/.
import { Slug } from '../catalog/requests.js';
import type { ServiceContext } from '../context.js';
import { CatalogEntry } from '../db/entities/index.js';
import { AppError } from '../errors/app-error.js';
import type { Failed, Refused } from '../upstream/index.js';

const hasControlChar = (s: string): boolean => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * Refuses `//`, `@`, `..`, `.` (also with `;` parameters), backslashes, their percent-encoded forms, control
 * characters and anything that looks like an absolute URL; returns the clean segments.
 */
export function safePathSegments(path: string): string[] | undefined {
  if (path.length > 2048) return undefined;
  // %3B too: `..%3B` is `..;` to servlet containers (below).
  if (/[\\@]/.test(path) || hasControlChar(path) || /%(2e|2f|5c|40|00|3b)/i.test(path)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.includes('//')) return undefined;
  const trimmed = path.startsWith('/') ? path.slice(1) : path;
  if (trimmed === '') return [];
  const segments = trimmed.split('/');
  // A trailing slash is allowed (empty last segment); any other empty or dot segment is not.
  for (const [i, s] of segments.entries()) {
    // A dot segment with path parameters (`..;x`, `.;`) is still a dot segment to Tomcat and Spring (RFC 3986 §3.3
    // lets `;` carry parameters): they climb out of the base as `..` would.
    const name = s.split(';')[0];
    if (name === '.' || name === '..') return undefined;
    if (s === '' && i !== segments.length - 1) return undefined;
    if (!/^[A-Za-z0-9._~!$&'()*+,;=:%-]*$/.test(s)) return undefined;
  }
  return segments;
}

/** Resolves a slug (+ path) to the upstream URL; unknown slug or unsafe path -> 400 BCK.ROUTER.0001. */
export async function resolveSlug(
  ctx: ServiceContext,
  slug: string,
  path: string | undefined,
  search = '',
): Promise<URL> {
  const entry = Slug.safeParse(slug).success ? await ctx.db.em().findOne(CatalogEntry, { slug }) : null;
  if (entry === null)
    throw new AppError('BCK.ROUTER.0001', { details: `unknown slug ${JSON.stringify(slug.slice(0, 64))}` });
  const segments = path === undefined ? [] : safePathSegments(path);
  if (segments === undefined)
    throw new AppError('BCK.ROUTER.0001', {
      details: 'path must be plain path segments (no //, @, .., \\ or absolute URL)',
    });
  const url = joinSlugPath(entry.upstreamUrl, segments);
  if (search !== '') url.search = search;
  return url;
}

/** The upstream base with the (already checked) path segments appended; never leaves the base's origin. */
export function joinSlugPath(base: string, segments: readonly string[]): URL {
  const url = new URL(base);
  const basePath = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  url.pathname = segments.length === 0 ? url.pathname : `${basePath}/${segments.join('/')}`;
  return url;
}

/**
 * The unpaid call to a catalog upstream as an error that does not carry the outbound module's reason (it names
 * the host or the address it resolved to).
 */
export function slugUpstreamError(outcome: Refused | Failed, slug: string): AppError {
  if (outcome.type === 'refused') {
    return new AppError('BCK.ROUTER.0001', {
      details: `the upstream of slug ${slug} cannot be called (refused by the outbound policy)`,
      params: { slug },
    });
  }
  return new AppError('BCK.HTTP.0502', {
    details: `the upstream of slug ${slug} could not be reached`,
    params: { slug },
  });
}
