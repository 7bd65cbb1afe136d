// The catalog on the wire: the operator's view (with the upstream) and the public one (never the upstream).
import type { InferEntity } from '@mikro-orm/core';
import type { CatalogEntry } from '../db/entities/index.js';

type Entry = InferEntity<typeof CatalogEntry>;

/** What anyone may read of an entry: what an agent needs to choose it, never where it leads. */
export const publicService = (e: Entry) => ({
  slug: e.slug,
  name: e.name ?? e.slug,
  description: e.description ?? null,
  category: e.category ?? null,
  protocol: e.protocol ?? null,
  priceHint: e.priceHint ?? null,
});

/** The operator's view (the CLI): the public fields and the upstream base URL. */
export const operatorEntry = (e: Entry) => ({
  ...publicService(e),
  url: e.upstreamUrl,
  createdAt: e.createdAt.toISOString(),
  updatedAt: (e.updatedAt ?? e.createdAt).toISOString(),
});
