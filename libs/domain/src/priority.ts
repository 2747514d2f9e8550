/**
 * Priority and fair share. A run has a priority, 1 (starts first) to 5, and may have a fairness
 * key: a template over its payload, as a concurrency key is, resolved when the run is created, and
 * a weight. Among a queue's due runs the next start goes to the best priority; within it the keys
 * take starts in proportion to their weights (runs without a key share one key); within a key the
 * oldest due goes first. The transport orders by priority; the ledger lets a queue's keyed runs
 * into the transport a window at a time, choosing by weighted turns (migration 0026).
 */
import type { JsonValue } from './closed-sets.js';
import { resolveConcurrencyKey } from './concurrency.js';
import { ValidationError } from './errors.js';

export const MIN_PRIORITY = 1;
export const MAX_PRIORITY = 5;
export const DEFAULT_PRIORITY = 3;
export const MAX_FAIRNESS_WEIGHT = 100;
export const DEFAULT_FAIRNESS_WEIGHT = 1;

export interface FairnessSpec {
  /** The template as declared: literal text and `{{payload...}}` placeholders. */
  key: string;
  weight: number;
}

/** A run's resolved fairness: the key whose turns it takes, and the key's weight. */
export interface RunFairness {
  key: string;
  weight: number;
}

/**
 * The fairness a declaration gives a payload known when it is declared (a schedule's, an ad-hoc
 * run's, a step's graph's): refused with a 400 naming `field.key` when the key cannot be resolved.
 */
export function fairnessFor(spec: FairnessSpec | null, payload: JsonValue | null, field: string): RunFairness | null {
  if (spec === null) return null;
  const resolution = resolveConcurrencyKey(spec.key, payload, 'fairness key');
  if (resolution.kind === 'unresolved') {
    throw new ValidationError('VALIDATION_FAILED', `${field}.key`, `${field}.key: ${resolution.reason}; give the payload that field or change the key`);
  }
  return { key: resolution.key, weight: spec.weight };
}

/**
 * The fairness of a run made over a payload known only now (an event's, a sensor's ask): a key
 * that cannot be resolved puts the run with the runs without a key, which share one key.
 */
export function fairnessOver(spec: FairnessSpec | null, payload: JsonValue | null): RunFairness | null {
  if (spec === null) return null;
  const resolution = resolveConcurrencyKey(spec.key, payload, 'fairness key');
  return resolution.kind === 'resolved' ? { key: resolution.key, weight: spec.weight } : null;
}

/**
 * Refuses a declaration whose fairness keys its payload cannot resolve: the run's own (field
 * `fairness`) and each step's (`steps[i].fairness`).
 */
export function checkFairnessResolves(
  declared: { fairness: FairnessSpec | null; target: { type: string; steps?: readonly { fairness?: FairnessSpec }[] }; payload: JsonValue | null },
  prefix = '',
): void {
  fairnessFor(declared.fairness, declared.payload, `${prefix}fairness`);
  declared.target.steps?.forEach((step, i) => fairnessFor(step.fairness ?? null, declared.payload, `${prefix}steps[${i}].fairness`));
}
