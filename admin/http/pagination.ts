import { z } from 'zod';
import { wholeNumber } from '../../shared/text.js';

/** Paged lists: page 1-based (default 1), offset = results per page (default 10). */
export const MAX_PAGE_SIZE = 100;

export const PageQuery = z.object({
  page: wholeNumber(1, 1_000_000).default(1),
  offset: wholeNumber(1, MAX_PAGE_SIZE).default(10),
});

export const SortedPageQuery = PageQuery.extend({
  sortBy: z.enum(['createdAt', 'updatedAt', 'name']).default('createdAt'),
  sortOrder: z.enum(['asc', 'desc']).default('desc'),
});

export type Page = z.infer<typeof PageQuery>;
export type SortedPage = z.infer<typeof SortedPageQuery>;
