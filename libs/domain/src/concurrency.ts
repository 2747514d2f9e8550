/**
 * Concurrency keys: `{ "key": "customer-{{payload.customerId}}", "limit": 1 }` on a schedule, a run,
 * a sensor's runs or a step. The key is a template over the run's payload, resolved when the run is
 * created; at most `limit` runs holding the same resolved key run at once in a namespace (decided
 * by the ledger when a run is claimed).
 */
import type { JsonValue } from './closed-sets.js';
import { ValidationError } from './errors.js';

export interface ConcurrencySpec {
  /** The template as declared: literal text and `{{payload}}` / `{{payload.a.b}}` placeholders. */
  key: string;
  limit: number;
}

/** A run's resolved concurrency: the key it holds while running, and the limit it was created with. */
export interface RunConcurrency {
  key: string;
  limit: number;
}

export const MAX_CONCURRENCY_LIMIT = 10_000;
export const MAX_CONCURRENCY_KEY_LENGTH = 200;

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
/** `payload...`, or `event...`: for a run an event started, the event under its payload's `event`. */
const PAYLOAD_PATH = /^(payload|event)(\.[A-Za-z0-9_-]+)*$/;

/** The payload paths a template reads, each as its segments after `payload`; refuses a placeholder that is no payload path. */
export function keyTemplatePaths(template: string, field: string): string[][] {
  const paths: string[][] = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    const expression = match[1]!.trim();
    if (!PAYLOAD_PATH.test(expression)) {
      throw new ValidationError(
        'VALIDATION_FAILED',
        field,
        `${field}: {{${match[1]}}} is not a payload path; write {{payload}}, {{payload.<field>}} or, on a schedule started by events, {{event.data.<field>}} (fields of letters, digits, "_" or "-", joined by ".")`,
      );
    }
    const segments = expression.split('.');
    paths.push(segments[0] === 'event' ? segments : segments.slice(1));
  }
  const rest = template.replace(PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}')) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} has an unclosed placeholder; write {{payload.<field>}}`);
  }
  return paths;
}

export type KeyResolution = { kind: 'resolved'; key: string } | { kind: 'unresolved'; reason: string };

/**
 * The key a template (a concurrency or fairness key, `noun` in the reasons) gives for `payload`: each placeholder replaced by the string, number or
 * boolean at its path. Unresolved when a path leads nowhere, to null, an object or an array, or
 * when the key comes out empty or longer than MAX_CONCURRENCY_KEY_LENGTH.
 */
export function resolveConcurrencyKey(template: string, payload: JsonValue | null, noun = 'concurrency key'): KeyResolution {
  let missing: string | null = null;
  const key = template.replace(PLACEHOLDER, (_, inner: string) => {
    const expression = inner.trim();
    const segments = expression.split('.');
    let value: JsonValue | undefined = payload;
    // {{event...}} reads the event a run was started by, which its payload carries under `event`.
    for (const segment of segments[0] === 'event' ? segments : segments.slice(1)) {
      value = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, segment) ? value[segment] : undefined;
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    missing ??= `${expression} is ${value === undefined ? 'absent from the payload' : value === null ? 'null' : Array.isArray(value) ? 'an array' : 'an object'}`;
    return '';
  });
  if (missing !== null) return { kind: 'unresolved', reason: `the ${noun} ${template} cannot be resolved: ${missing}` };
  if (key.length === 0) return { kind: 'unresolved', reason: `the ${noun} ${template} resolves to an empty key` };
  if (key.length > MAX_CONCURRENCY_KEY_LENGTH) {
    return { kind: 'unresolved', reason: `the ${noun} ${template} resolves to ${key.length} characters; at most ${MAX_CONCURRENCY_KEY_LENGTH}` };
  }
  return { kind: 'resolved', key };
}

/**
 * The run concurrency a declaration gives a payload known when it is declared (a schedule's, an
 * ad-hoc run's, a step's graph's): refused with a 400 naming `field` when the key cannot be resolved.
 */
export function concurrencyFor(spec: ConcurrencySpec | null, payload: JsonValue | null, field: string): RunConcurrency | null {
  if (spec === null) return null;
  const resolution = resolveConcurrencyKey(spec.key, payload);
  if (resolution.kind === 'unresolved') {
    throw new ValidationError('VALIDATION_FAILED', `${field}.key`, `${field}.key: ${resolution.reason}; give the payload that field or change the key`);
  }
  return { key: resolution.key, limit: spec.limit };
}

/**
 * Refuses a declaration whose keys its payload cannot resolve: the run's own key (field
 * `concurrency`) and each step's (`steps[i].concurrency`), all resolved over the one payload.
 */
export function checkKeysResolve(
  declared: { concurrency: ConcurrencySpec | null; target: { type: string; steps?: readonly { concurrency?: ConcurrencySpec }[] }; payload: JsonValue | null },
  prefix = '',
): void {
  concurrencyFor(declared.concurrency, declared.payload, `${prefix}concurrency`);
  declared.target.steps?.forEach((step, i) => concurrencyFor(step.concurrency ?? null, declared.payload, `${prefix}steps[${i}].concurrency`));
}
