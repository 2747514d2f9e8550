/**
 * A run's progress (ctx.progress) in a form a page can draw: a fraction when the value says how far
 * along it is, else the JSON as it was reported. A fraction is read from { done, total } (and its
 * kin: current/total, completed/total, count/total, value/max), from { percent } or
 * { percentage } (0 to 100), from { fraction } or { ratio } (0 to 1), or from a bare number from
 * 0 to 1 (a fraction) or up to 100 (a percent).
 */
import type { JsonValue } from '../data/wire/index.js';

export type ProgressShape =
  | { kind: 'none' }
  | { kind: 'bar'; fraction: number; label: string; json: string }
  | { kind: 'json'; json: string };

const COUNTS: readonly [string, string][] = [
  ['done', 'total'],
  ['current', 'total'],
  ['completed', 'total'],
  ['count', 'total'],
  ['processed', 'total'],
  ['value', 'max'],
];

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const clamp = (f: number): number => Math.min(1, Math.max(0, f));
const percentText = (f: number): string => `${Math.floor(clamp(f) * 100)}%`;

export function progressShape(progress: JsonValue | null | undefined): ProgressShape {
  if (progress === null || progress === undefined) return { kind: 'none' };
  const json = JSON.stringify(progress, null, 2);
  if (finite(progress)) {
    if (progress >= 0 && progress <= 1) return { kind: 'bar', fraction: progress, label: percentText(progress), json };
    if (progress > 1 && progress <= 100) return { kind: 'bar', fraction: progress / 100, label: `${progress}%`, json };
    return { kind: 'json', json };
  }
  if (typeof progress !== 'object' || Array.isArray(progress)) return { kind: 'json', json };
  const o = progress as Record<string, JsonValue>;
  for (const [part, whole] of COUNTS) {
    const done = o[part];
    const total = o[whole];
    if (finite(done) && finite(total) && total > 0) return { kind: 'bar', fraction: clamp(done / total), label: `${done} of ${total} (${percentText(done / total)})`, json };
  }
  for (const key of ['percent', 'percentage', 'pct']) {
    const p = o[key];
    if (finite(p)) return { kind: 'bar', fraction: clamp(p / 100), label: `${p}%`, json };
  }
  for (const key of ['fraction', 'ratio']) {
    const f = o[key];
    if (finite(f)) return { kind: 'bar', fraction: clamp(f), label: percentText(f), json };
  }
  return { kind: 'json', json };
}
