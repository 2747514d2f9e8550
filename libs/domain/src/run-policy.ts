/** What a run executes and how it is retried: shared by schedules and ad-hoc runs. */
import { ValidationError } from './errors.js';
import { DEFAULT_QUEUE, HANDLER_NAME_PATTERN, QUEUE_NAME_PATTERN } from './handlers.js';
import {
  isObject,
  join,
  readDuration,
  readEnum,
  readInteger,
  readNumber,
  readObject,
  readString,
  readStringMap,
  type JsonObject,
} from './json-readers.js';
import { BACKOFF_TYPES, HTTP_METHODS, type BackoffType, type HttpMethod } from './closed-sets.js';

export type Target =
  /** Whether a worker on `queue` knows `name` is checked against the worker registry, not here. */
  | { type: 'handler'; name: string; queue: string }
  | { type: 'http'; url: string; method: HttpMethod; headers: Record<string, string>; timeoutMs: number };

export interface BackoffPolicy {
  type: BackoffType;
  baseMs: number;
  maxMs: number;
  /** Fraction of each delay randomised away, 0 to 1. */
  jitter: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  backoff: BackoffPolicy;
}

/** 60 s × 2^n capped at 1 h, three attempts in all. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  backoff: Object.freeze({ type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 }),
});

export const DEFAULT_RUN_TIMEOUT_MS = 5 * 60_000;
export const MAX_RUN_TIMEOUT_MS = 24 * 3_600_000;
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
export const MAX_ATTEMPTS_LIMIT = 100;
export const MAX_BACKOFF_MS = 7 * 24 * 3_600_000;

export function readTarget(body: JsonObject, key: string): Target {
  checkTargetShape(body[key], key);
  const raw = body[key] as JsonObject;
  const type = raw.type as Target['type'];
  const obj = readObject(raw, key, type === 'handler' ? ['type', 'name', 'queue'] : ['type', 'url', 'method', 'headers', 'timeout']);
  if (type === 'handler') {
    const name = readString(obj, 'name', key);
    if (name === undefined) {
      throw new ValidationError('MISSING_FIELD', join(key, 'name'), `${key}.name is required for a handler target`);
    }
    if (!HANDLER_NAME_PATTERN.test(name)) {
      throw new ValidationError(
        'VALIDATION_FAILED',
        join(key, 'name'),
        `${key}.name must be 1 to 128 letters, digits, "_", "." or "-"`,
      );
    }
    const queue = readString(obj, 'queue', key) ?? DEFAULT_QUEUE;
    if (!QUEUE_NAME_PATTERN.test(queue)) {
      throw new ValidationError(
        'VALIDATION_FAILED',
        join(key, 'queue'),
        `${key}.queue must be 1 to 64 letters, digits, "_", "." or "-" (default "${DEFAULT_QUEUE}")`,
      );
    }
    return { type, name, queue };
  }
  const url = readString(obj, 'url', key, { maxLength: 2048 });
  if (url === undefined) {
    throw new ValidationError('MISSING_FIELD', join(key, 'url'), `${key}.url is required for an http target`);
  }
  checkWebhookUrl(url, join(key, 'url'));
  return {
    type,
    url,
    method: readEnum(obj, 'method', key, HTTP_METHODS) ?? 'POST',
    headers: readHeaders(obj.headers, join(key, 'headers')) ?? {},
    timeoutMs: readDuration(obj, 'timeout', key, { minMs: 1, maxMs: MAX_RUN_TIMEOUT_MS }) ?? DEFAULT_HTTP_TIMEOUT_MS,
  };
}

/** A target is an object whose `type` says which kind it is; what each kind carries is read after. */
export function checkTargetShape(value: unknown, field: string): void {
  if (value === undefined || value === null) {
    throw new ValidationError(
      'MISSING_FIELD',
      field,
      `${field} is required: { "type": "handler", "name": "echo" } or { "type": "http", "url": "https://..." }`,
    );
  }
  if (!isObject(value)) {
    throw new ValidationError('INVALID_TARGET', field, `${field} must be an object with a "type" of "handler" or "http"`);
  }
  if (readEnum(value, 'type', field, TARGET_TYPES) === undefined) {
    throw new ValidationError('MISSING_FIELD', join(field, 'type'), `${field}.type is required: "handler" or "http"`);
  }
}

export const TARGET_TYPES = ['handler', 'http'] as const;

/** An absolute http or https URL without credentials, which belong in the headers. */
export function checkWebhookUrl(url: string, field: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError('INVALID_TARGET', field, `${field} is not a valid absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ValidationError('INVALID_TARGET', field, `${field} must use http or https`);
  }
  if (parsed.username || parsed.password) {
    const headers = field.replace(/url$/, 'headers');
    throw new ValidationError('INVALID_TARGET', field, `${field} must not carry credentials; send them in ${headers} instead`);
  }
}

/** RFC 9110 token: the characters a header name may use. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A value with one of these could end the header early and smuggle another in. */
const HEADER_VALUE_BREAK = /[\r\n\0]/;
/** Headers Kairos sets itself, or that frame the HTTP message; a target may not override them. */
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'kairos-signature', 'idempotency-key', 'upgrade', 'te', 'trailer', 'keep-alive']);

/** A webhook's headers at `field`: storable strings under RFC 9110 token names, none that Kairos sets or that frames the request. */
export function readHeaders(value: unknown, field: string): Record<string, string> | undefined {
  const headers = readStringMap({ [field]: value }, field, '', { maxEntries: 50, maxValueLength: 4096 });
  for (const [name, text] of Object.entries(headers ?? {})) {
    const at = join(field, name);
    if (!HEADER_NAME.test(name)) {
      throw new ValidationError('VALIDATION_FAILED', at, `${at}: a header name is letters, digits and !#$%&'*+-.^_\`|~ only (RFC 9110 token)`);
    }
    const lower = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith('proxy-')) {
      throw new ValidationError('INVALID_TARGET', at, `${at}: Kairos sets ${name} itself or it frames the request; remove it`);
    }
    if (HEADER_VALUE_BREAK.test(text)) {
      throw new ValidationError('VALIDATION_FAILED', at, `${at} must not contain CR, LF or NUL characters`);
    }
  }
  return headers;
}

/** The queue a run of `target` travels on: its handler's queue, or the default queue for HTTP targets. */
export function queueOf(target: Target): string {
  return target.type === 'handler' ? (target.queue ?? DEFAULT_QUEUE) : DEFAULT_QUEUE;
}

export function readRetryPolicy(body: JsonObject, key: string): RetryPolicy {
  const raw = body[key];
  if (raw === undefined || raw === null) return DEFAULT_RETRY_POLICY;
  const obj = readObject(raw, key, ['maxAttempts', 'backoff']);
  const maxAttempts = readInteger(obj, 'maxAttempts', key, 1, MAX_ATTEMPTS_LIMIT) ?? DEFAULT_RETRY_POLICY.maxAttempts;
  const backoffField = join(key, 'backoff');
  const defaults = DEFAULT_RETRY_POLICY.backoff;
  if (obj.backoff === undefined || obj.backoff === null) return { maxAttempts, backoff: defaults };
  const b = readObject(obj.backoff, backoffField, ['type', 'base', 'max', 'jitter']);
  const baseMs = readDuration(b, 'base', backoffField, { maxMs: MAX_RUN_TIMEOUT_MS }) ?? defaults.baseMs;
  // Without an explicit max, a base above the default cap raises the cap to the base.
  const backoff: BackoffPolicy = {
    type: readEnum(b, 'type', backoffField, BACKOFF_TYPES) ?? defaults.type,
    baseMs,
    maxMs: readDuration(b, 'max', backoffField, { maxMs: MAX_BACKOFF_MS }) ?? Math.max(defaults.maxMs, baseMs),
    jitter: readNumber(b, 'jitter', backoffField, 0, 1) ?? defaults.jitter,
  };
  if (backoff.maxMs < backoff.baseMs) {
    throw new ValidationError(
      'VALIDATION_FAILED',
      join(backoffField, 'max'),
      `${backoffField}.max must be at least ${backoffField}.base`,
    );
  }
  return { maxAttempts, backoff };
}
