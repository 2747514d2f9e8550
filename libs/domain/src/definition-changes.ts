/**
 * What changed between two schedule definitions in wire form, field by field: nested objects
 * (target, retry, dst, catchup, labels) by their dotted paths, so a plan or a version says
 * `retry.maxAttempts: 3 → 5` rather than that the whole policy changed. A payload is the user's
 * own JSON and counts as one field.
 */
import type { JsonValue } from './closed-sets.js';

type Definition = Record<string, unknown>;

export interface FieldChange {
  field: string;
  /** Null when the field was absent. */
  from: JsonValue;
  to: JsonValue;
}

/** Fields whose value is compared whole, whatever it holds. */
const OPAQUE_FIELDS = new Set(['payload']);

function isPlainObject(value: unknown): value is Definition {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function collect(from: unknown, to: unknown, path: string, out: FieldChange[]): void {
  if (path !== '' && OPAQUE_FIELDS.has(path)) {
    if (!same(from, to)) out.push({ field: path, from: (from ?? null) as JsonValue, to: (to ?? null) as JsonValue });
    return;
  }
  if (isPlainObject(from) && isPlainObject(to)) {
    const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])].sort();
    for (const key of keys) collect(from[key], to[key], path === '' ? key : `${path}.${key}`, out);
    return;
  }
  if (!same(from, to)) out.push({ field: path, from: (from ?? null) as JsonValue, to: (to ?? null) as JsonValue });
}

/** The fields that differ from `from` to `to`, sorted by path; none when they are equal. */
export function definitionChanges(from: Definition | null, to: Definition): FieldChange[] {
  const out: FieldChange[] = [];
  collect(from ?? {}, to, '', out);
  return out;
}
