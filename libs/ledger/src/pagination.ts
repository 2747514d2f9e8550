/** Keyset pagination: an opaque cursor wraps the sort key of the last row of a page. */
import { ValidationError } from '@kairos/domain';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

/** The key inside a cursor; `isValid` checks it is the kind of key this listing sorts by. */
export function decodeCursor(cursor: string, isValid: (key: string) => boolean): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isValid(key)) {
    throw new ValidationError('INVALID_CURSOR', 'cursor', 'cursor is not one this listing issued; pass nextCursor from the previous page unchanged');
  }
  return key;
}

/** Builds a page from `limit + 1` fetched rows: the extra row only says whether another page exists. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null };
}
