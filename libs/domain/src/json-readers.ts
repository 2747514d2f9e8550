/**
 * Reading untrusted JSON at the edge. Each reader names the field it failed on and says what it
 * expected, so a 400 tells the caller exactly what to fix.
 */
import { ValidationError } from './errors.js';
import { DurationError, parseDuration } from './time/index.js';
import { MAX_PAYLOAD_BYTES, type JsonValue } from './closed-sets.js';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function join(prefix: string, key: string): string {
  return prefix ? `${prefix}.${key}` : key;
}

/**
 * Text Postgres can store and give back unchanged: no NUL (a text column refuses it) and no
 * unpaired UTF-16 surrogate (it would be stored as U+FFFD and read back as something else).
 */
const UNSTORABLE_TEXT = /[\0\p{Cs}]/u;
const EVERY_UNSTORABLE_CHARACTER = new RegExp(UNSTORABLE_TEXT, 'gu');

/** Refuses text Postgres cannot store as given: NUL, or an unpaired UTF-16 surrogate (stored as U+FFFD). */
export function checkStorableText(value: string, field: string): void {
  if (UNSTORABLE_TEXT.test(value)) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must not contain NUL (U+0000) or an unpaired UTF-16 surrogate`);
  }
}

/** `value` with U+FFFD in place of each character Postgres cannot store as given (text a write must not be refused for). */
export function storableText(value: string): string {
  return value.replace(EVERY_UNSTORABLE_CHARACTER, '\uFFFD');
}

export function present(obj: JsonObject, key: string): boolean {
  return obj[key] !== undefined && obj[key] !== null;
}

export function readString(
  obj: JsonObject,
  key: string,
  prefix: string,
  opts: { maxLength?: number; pattern?: RegExp; patternHint?: string } = {},
): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  const field = join(prefix, key);
  if (typeof value !== 'string') {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must be a string`);
  }
  const maxLength = opts.maxLength ?? 200;
  if (value.length === 0 || value.length > maxLength) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must be 1 to ${maxLength} characters long`);
  }
  checkStorableText(value, field);
  if (opts.pattern && !opts.pattern.test(value)) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} ${opts.patternHint ?? 'has an invalid format'}`);
  }
  return value;
}

export function readEnum<T extends string>(
  obj: JsonObject,
  key: string,
  prefix: string,
  allowed: readonly T[],
): T | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  const field = join(prefix, key);
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new ValidationError(
      'VALIDATION_FAILED',
      field,
      `${field} must be one of ${allowed.map((a) => `"${a}"`).join(', ')}; got ${JSON.stringify(value)}`,
    );
  }
  return value as T;
}

/** A duration: "90s", "15m", "1h30m", or integer milliseconds. */
export function readDuration(
  obj: JsonObject,
  key: string,
  prefix: string,
  bounds: { minMs?: number; maxMs?: number } = {},
): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  const field = join(prefix, key);
  let ms: number;
  try {
    if (typeof value !== 'string' && typeof value !== 'number') throw new DurationError('expected a string or a number');
    ms = parseDuration(value);
  } catch (error) {
    if (!(error instanceof DurationError)) throw error;
    throw new ValidationError(
      'INVALID_DURATION',
      field,
      `${field}: ${error.message} (write a duration such as "90s", "15m", "1h30m", or integer milliseconds)`,
    );
  }
  if (bounds.minMs !== undefined && ms < bounds.minMs) {
    throw new ValidationError('INVALID_DURATION', field, `${field} must be at least ${bounds.minMs} ms`);
  }
  if (bounds.maxMs !== undefined && ms > bounds.maxMs) {
    throw new ValidationError('INVALID_DURATION', field, `${field} must be at most ${bounds.maxMs} ms`);
  }
  return ms;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Instants are written back as four-digit years in UTC, so an offset may not carry one out of 0000..9999. */
const MIN_INSTANT_MS = Date.parse('0000-01-01T00:00:00Z');
const MAX_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** An ISO 8601 instant with an explicit offset ("Z" or "+02:00"); a bare local time is ambiguous and refused. */
export function parseInstant(value: unknown, field: string): number {
  const ms = typeof value === 'string' && ISO_INSTANT.test(value) && isCalendarDate(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new ValidationError(
      'INVALID_INSTANT',
      field,
      `${field} must be an ISO 8601 instant with an offset, such as "2026-12-01T09:00:00Z"; got ${JSON.stringify(value)}`,
    );
  }
  if (ms < MIN_INSTANT_MS || ms > MAX_INSTANT_MS) {
    throw new ValidationError('INVALID_INSTANT', field, `${field} must lie in the years 0000 to 9999 in UTC; got ${JSON.stringify(value)}`);
  }
  return ms;
}

/** Date.parse rolls "2026-02-30" over to March 2; a day the month does not have is a typo to refuse. */
function isCalendarDate(iso: string): boolean {
  const year = Number(iso.slice(0, 4));
  const month = Number(iso.slice(5, 7));
  const day = Number(iso.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return daysInMonth !== undefined && day <= daysInMonth;
}

/** A JSON payload, at most MAX_PAYLOAD_BYTES when serialized. */
export function readPayload(obj: JsonObject, key: string, prefix: string): JsonValue | null {
  const value = obj[key];
  if (value === undefined || value === null) return null;
  const field = join(prefix, key);
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new ValidationError(
      'PAYLOAD_TOO_LARGE',
      field,
      `${field} is ${bytes} bytes of JSON; the limit is ${MAX_PAYLOAD_BYTES} bytes (256 KiB). Store large data elsewhere and pass a reference`,
    );
  }
  return value as JsonValue;
}

const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A flat map of string keys to string values (labels, headers). */
export function readStringMap(
  obj: JsonObject,
  key: string,
  prefix: string,
  limits: { maxEntries: number; maxValueLength: number },
): Record<string, string> | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  const field = join(prefix, key);
  if (!isObject(value)) throw new ValidationError('VALIDATION_FAILED', field, `${field} must be an object of strings`);
  const entries = Object.entries(value);
  if (entries.length > limits.maxEntries) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} may hold at most ${limits.maxEntries} entries`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    // Assigning "__proto__" to a plain object would drop the entry silently; such keys are refused.
    if (RESERVED_KEYS.has(k)) {
      throw new ValidationError('VALIDATION_FAILED', join(field, k), `${join(field, k)}: "${k}" is reserved and cannot be used as a key`);
    }
    if (typeof v !== 'string' || v.length > limits.maxValueLength) {
      throw new ValidationError(
        'VALIDATION_FAILED',
        join(field, k),
        `${join(field, k)} must be a string of at most ${limits.maxValueLength} characters`,
      );
    }
    checkStorableText(k, join(field, k));
    checkStorableText(v, join(field, k));
    out[k] = v;
  }
  return out;
}
