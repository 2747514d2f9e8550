/** What a run executes and how it is retried: shared by schedules and ad-hoc runs. */
import { ValidationError } from './errors.js';
import { DEFAULT_QUEUE } from './handlers.js';
import { isObject, join, readEnum, readStringMap } from './json-readers.js';
import type { BackoffType, HttpMethod } from './closed-sets.js';
import type { SensorEvaluation } from './sensors.js';

/** One call: what a run, or one step of a run, executes. */
export type CallTarget =
  /** Whether a worker on `queue` knows `name` is checked against the worker registry, not here. */
  | { type: 'handler'; name: string; queue: string; /** Set only on a sensor's evaluation runs. */ evaluation?: SensorEvaluation }
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
export function queueOf(target: CallTarget): string {
  return target.type === 'handler' ? (target.queue ?? DEFAULT_QUEUE) : DEFAULT_QUEUE;
}
