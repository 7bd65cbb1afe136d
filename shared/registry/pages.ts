// Paging of registry lists. The HTTP layer validates page/offset/sort (admin/http/pagination.ts); services
// take the already-validated values and turn them into LIMIT/OFFSET with a stable order.

export interface PageRequest {
  /** 1-based page number. */
  readonly page: number;
  /** Results per page (the interface calls it `offset`). */
  readonly offset: number;
}

export interface SortedPageRequest extends PageRequest {
  readonly sortBy: 'createdAt' | 'updatedAt' | 'name';
  readonly sortOrder: 'asc' | 'desc';
}

export interface PageOf<T> {
  readonly total: number;
  readonly page: number;
  readonly offset: number;
  readonly items: T[];
}

export const limitOffset = (p: PageRequest): { limit: number; offset: number } => ({
  limit: p.offset,
  offset: (p.page - 1) * p.offset,
});

/** ORDER BY the chosen column, then the primary key in the same direction, so equal values page stably. */
export function orderOf(p: SortedPageRequest): { [k: string]: 'asc' | 'desc' }[] {
  return [{ [p.sortBy]: p.sortOrder }, { id: p.sortOrder }];
}

export const DEFAULT_SORT: Pick<SortedPageRequest, 'sortBy' | 'sortOrder'> = { sortBy: 'createdAt', sortOrder: 'desc' };
