/**
 * Which events a schedule's `on.match` (or a wait's `match`) takes: every entry, a dotted path into
 * the event ({ id, name, data, receivedAt }) to a JSON value, must equal the event's value there as
 * JSON (objects whatever their key order, arrays in order, 1 and 1.0 alike); a path the event lacks
 * never matches. The ledger's kairos_event_matches says the same for waits; test/api/events.spec.ts
 * holds both to one table.
 */
import type { JsonValue } from './closed-sets.js';
import { canonicalJson } from './schedule-spec.js';

export type EventMatch = Record<string, JsonValue>;

/** The value at a dotted path of `root`, or undefined when it has none. */
export function valueAtPath(root: JsonValue, path: string): JsonValue | undefined {
  let value: JsonValue | undefined = root;
  for (const segment of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Array.isArray(value) ? (/^(0|[1-9][0-9]*)$/.test(segment) ? value[Number(segment)] : undefined) : Object.hasOwn(value, segment) ? value[segment] : undefined;
  }
  return value;
}

export function eventMatches(event: JsonValue, match: EventMatch): boolean {
  return Object.entries(match).every(([path, expected]) => {
    const actual = valueAtPath(event, path);
    return actual !== undefined && canonicalJson(actual) === canonicalJson(expected);
  });
}

/**
 * Items found by the events their match takes, without comparing each event with each item: the
 * items are filed under their first entry (path and value), so an event is compared only with the
 * items whose first entry it fits, and with those that match every event.
 */
export class MatchIndex<T> {
  private readonly everything: T[] = [];
  private readonly byFirst = new Map<string, Map<string, { item: T; match: EventMatch }[]>>();

  constructor(entries: Iterable<{ item: T; match: EventMatch }>) {
    for (const entry of entries) {
      const paths = Object.keys(entry.match).sort();
      if (paths.length === 0) {
        this.everything.push(entry.item);
        continue;
      }
      const first = paths[0]!;
      let byValue = this.byFirst.get(first);
      if (!byValue) this.byFirst.set(first, (byValue = new Map()));
      const value = canonicalJson(entry.match[first]);
      byValue.set(value, [...(byValue.get(value) ?? []), entry]);
    }
  }

  /** The items whose match `event` fits, those that match everything first. */
  matching(event: JsonValue): T[] {
    const found = [...this.everything];
    for (const [path, byValue] of this.byFirst) {
      const actual = valueAtPath(event, path);
      if (actual === undefined) continue;
      for (const entry of byValue.get(canonicalJson(actual)) ?? []) if (eventMatches(event, entry.match)) found.push(entry.item);
    }
    return found;
  }
}
