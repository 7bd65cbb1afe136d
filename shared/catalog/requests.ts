// What the catalog accepts: the operator's metadata of an entry (CLI) and the public listing's query.
import { z } from 'zod';
import { line, text } from '../text.js';

/** A category names a shelf of the catalog: lowercase, like a slug, so `?category=` is an exact match. */
export const Category = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be 1-40 lowercase letters, digits or dashes');

export const CatalogProtocol = z.enum(['x402', 'mpp']);

/** What an agent reads to choose a service; each field optional (`null` clears it on update). */
export const CatalogMetadata = z.object({
  name: line(100, { trim: true }).min(1).nullable().optional(),
  description: text(1000).nullable().optional(),
  category: Category.nullable().optional(),
  protocol: CatalogProtocol.nullable().optional(),
  priceHint: line(100, { trim: true }).min(1).nullable().optional(),
});
export type CatalogMetadata = z.infer<typeof CatalogMetadata>;

/** `GET /catalog/services`: a free-text `query` (slug, name, description; case-insensitive) and a `category`. */
export const ServicesFilter = z.object({
  query: line(200, { trim: true }).optional(),
  category: Category.optional(),
});

export const Slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lowercase letters, digits or dashes');

/** An entry's upstream base: http(s), no credentials (they would travel to every caller's request). */
export const UpstreamBase = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .refine(
    (u) => !/@/.test(new URL(u).host) && new URL(u).username === '' && new URL(u).password === '',
    'must not carry credentials',
  );
