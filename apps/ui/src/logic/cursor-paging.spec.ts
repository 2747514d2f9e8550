import { describe, expect, it } from 'vitest';
import { currentCursor, firstPage, hasNext, hasPrevious, loaded, next, pageNumber, previous, type CursorPaging } from './cursor-paging.js';

type Step = ['loaded', string | null] | ['next'] | ['previous'];

function play(steps: Step[]): CursorPaging {
  return steps.reduce<CursorPaging>((paging, step) => {
    if (step[0] === 'loaded') return loaded(paging, step[1]);
    return step[0] === 'next' ? next(paging) : previous(paging);
  }, firstPage);
}

describe('cursor paging', () => {
  it.each<{ name: string; steps: Step[]; cursor: string | undefined; page: number; canNext: boolean; canPrevious: boolean }>([
    { name: 'starts on page 1 with no cursor', steps: [], cursor: undefined, page: 1, canNext: false, canPrevious: false },
    { name: 'a single page has no next', steps: [['loaded', null]], cursor: undefined, page: 1, canNext: false, canPrevious: false },
    { name: 'next follows the loaded cursor', steps: [['loaded', 'c1'], ['next']], cursor: 'c1', page: 2, canNext: false, canPrevious: true },
    { name: 'next before the page loaded stays', steps: [['next']], cursor: undefined, page: 1, canNext: false, canPrevious: false },
    { name: 'two pages on', steps: [['loaded', 'c1'], ['next'], ['loaded', 'c2'], ['next'], ['loaded', null]], cursor: 'c2', page: 3, canNext: false, canPrevious: true },
    { name: 'previous goes back to the cursor that fetched it', steps: [['loaded', 'c1'], ['next'], ['loaded', 'c2'], ['next'], ['previous']], cursor: 'c1', page: 2, canNext: false, canPrevious: true },
    { name: 'previous on page 1 stays', steps: [['loaded', 'c1'], ['previous']], cursor: undefined, page: 1, canNext: true, canPrevious: false },
    { name: 'back to the first page', steps: [['loaded', 'c1'], ['next'], ['previous'], ['loaded', 'c1']], cursor: undefined, page: 1, canNext: true, canPrevious: false },
  ])('$name', ({ steps, cursor, page, canNext, canPrevious }) => {
    const paging = play(steps);
    expect(currentCursor(paging)).toBe(cursor);
    expect(pageNumber(paging)).toBe(page);
    expect(hasNext(paging)).toBe(canNext);
    expect(hasPrevious(paging)).toBe(canPrevious);
  });
});
