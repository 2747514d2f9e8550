/** Previous / Next buttons over a cursor-paged list, with the page number; extra controls go after them. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { currentCursor, firstPage, hasNext, hasPrevious, loaded, next, pageNumber, previous, type CursorPaging } from '../logic/cursor-paging.js';
import { useLoad, type Loaded } from './load.js';

/**
 * A list read a page at a time: `fetchPage` reads the page at a cursor, again whenever the paging or
 * one of `inputs` changes. `paging` and `setPaging` drive a Pager; setPaging(firstPage) starts over.
 */
export function usePagedLoad<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
  inputs: unknown[] = [],
): { page: Loaded<T[]>; reload: () => void; paging: CursorPaging; setPaging: (move: CursorPaging | ((p: CursorPaging) => CursorPaging)) => void } {
  const [paging, setPaging] = useState(firstPage);
  const cursor = currentCursor(paging);
  const [page, reload] = useLoad(async () => {
    const result = await fetchPage(cursor);
    setPaging((p) => loaded(p, result.nextCursor));
    return result.items;
  }, [cursor, ...inputs]);
  return { page, reload, paging, setPaging };
}

export function Pager({ paging, onChange, children }: { paging: CursorPaging; onChange: (move: (p: CursorPaging) => CursorPaging) => void; children?: ComponentChildren }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={!hasPrevious(paging)} onClick={() => onChange(previous)}>
        Previous
      </button>
      <span>Page {pageNumber(paging)}</span>
      <button type="button" disabled={!hasNext(paging)} onClick={() => onChange(next)}>
        Next
      </button>
      {children}
    </nav>
  );
}
