/**
 * Where a cursor-paginated list stands: the cursors of the pages seen so far, so "previous" goes
 * back without the API paging backwards. A state is a value; every move returns a new one.
 */
export interface CursorPaging {
  /** The cursor that fetched each page up to the current one; the first page's is undefined. */
  readonly trail: readonly (string | undefined)[];
  /** The cursor of the page after the current one, or null on the last page. */
  readonly nextCursor: string | null;
}

export const firstPage: CursorPaging = { trail: [undefined], nextCursor: null };

export function currentCursor(paging: CursorPaging): string | undefined {
  return paging.trail[paging.trail.length - 1];
}

export function pageNumber(paging: CursorPaging): number {
  return paging.trail.length;
}

/** The current page arrived, saying what its next cursor is. */
export function loaded(paging: CursorPaging, nextCursor: string | null): CursorPaging {
  return { ...paging, nextCursor };
}

export function hasNext(paging: CursorPaging): boolean {
  return paging.nextCursor !== null;
}

export function hasPrevious(paging: CursorPaging): boolean {
  return paging.trail.length > 1;
}

export function next(paging: CursorPaging): CursorPaging {
  if (paging.nextCursor === null) return paging;
  return { trail: [...paging.trail, paging.nextCursor], nextCursor: null };
}

export function previous(paging: CursorPaging): CursorPaging {
  if (paging.trail.length <= 1) return paging;
  return { trail: paging.trail.slice(0, -1), nextCursor: null };
}
