import { z } from 'zod';

/** Paged lists (interface "Limits" 1): page 1-based (default 1), offset = results per page (default 10). */
export const MAX_PAGE_SIZE = 100;

export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  offset: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(10),
});

export const SortedPageQuery = PageQuery.extend({
  sortBy: z.enum(['createdAt', 'updatedAt', 'name']).default('createdAt'),
  sortOrder: z.enum(['asc', 'desc']).default('desc'),
});

export type Page = z.infer<typeof PageQuery>;
export type SortedPage = z.infer<typeof SortedPageQuery>;
