/** Previous / Next buttons over a cursor-paged list, with the page number; extra controls go after them. */
import type { ComponentChildren } from 'preact';
import { hasNext, hasPrevious, next, pageNumber, previous, type CursorPaging } from '../logic/cursor-paging.js';

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
