import { describe, expect, it } from 'vitest';
import { ValidationError, type ErrorCode } from './errors.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './run-policy.js';
import type { Target } from './steps.js';
import { readWire, retryPolicy, TargetInput } from './wire/index.js';
import { closedObject } from './wire/read.js';

/** The target under `key` of a body, as a schedule or a run reads it. */
const readTarget = (body: Record<string, unknown>, key: string) => readWire(closedObject({ [key]: TargetInput }), body)[key];
const readRetryPolicy = (body: Record<string, unknown>) => readWire(closedObject({ retry: retryPolicy() }), body).retry;

function refusal(fn: () => unknown): { code: ErrorCode; field: string | null } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const e = error as ValidationError;
    return { code: e.code, field: e.field };
  }
  throw new Error('expected a ValidationError, but the input was accepted');
}

describe('readTarget', () => {
  it.each<[string, unknown, Target]>([
    ['handler echo', { type: 'handler', name: 'echo' }, { type: 'handler', name: 'echo', queue: 'default' }],
    ['handler noop', { type: 'handler', name: 'noop' }, { type: 'handler', name: 'noop', queue: 'default' }],
    ['handler sleep', { type: 'handler', name: 'sleep' }, { type: 'handler', name: 'sleep', queue: 'default' }],
    ['handler fail', { type: 'handler', name: 'fail' }, { type: 'handler', name: 'fail', queue: 'default' }],
    [
      'http with defaults: POST, no headers, 30 s',
      { type: 'http', url: 'https://example.com/hook' },
      { type: 'http', url: 'https://example.com/hook', method: 'POST', headers: {}, timeoutMs: 30_000 },
    ],
    [
      'http in full',
      { type: 'http', url: 'http://hooks.example.com:8080/a?b=c', method: 'PUT', headers: { Authorization: 'Bearer x' }, timeout: '2m' },
      { type: 'http', url: 'http://hooks.example.com:8080/a?b=c', method: 'PUT', headers: { Authorization: 'Bearer x' }, timeoutMs: 120_000 },
    ],
    ['http timeout in ms', { type: 'http', url: 'https://e.com', timeout: 1_500 }, { type: 'http', url: 'https://e.com', method: 'POST', headers: {}, timeoutMs: 1_500 }],
    ['http GET', { type: 'http', url: 'https://e.com', method: 'GET' }, { type: 'http', url: 'https://e.com', method: 'GET', headers: {}, timeoutMs: 30_000 }],
    ['http PATCH', { type: 'http', url: 'https://e.com', method: 'PATCH' }, { type: 'http', url: 'https://e.com', method: 'PATCH', headers: {}, timeoutMs: 30_000 }],
    ['http DELETE', { type: 'http', url: 'https://e.com', method: 'DELETE' }, { type: 'http', url: 'https://e.com', method: 'DELETE', headers: {}, timeoutMs: 30_000 }],
    [
      'http timeout at the 24 h maximum',
      { type: 'http', url: 'https://e.com', timeout: '24h' },
      { type: 'http', url: 'https://e.com', method: 'POST', headers: {}, timeoutMs: 86_400_000 },
    ],
    [
      'http null optional fields take their defaults',
      { type: 'http', url: 'https://e.com', method: null, headers: null, timeout: null },
      { type: 'http', url: 'https://e.com', method: 'POST', headers: {}, timeoutMs: 30_000 },
    ],
  ])('accepts %s', (_name, target, expected) => {
    expect(readTarget({ target }, 'target')).toEqual(expected);
  });

  it('accepts every token character in a header name', () => {
    const headers = { "X-A!#$%&'*+.^_`|~09az": 'value with spaces, "quotes" and tabs\t' };
    expect(readTarget({ target: { type: 'http', url: 'https://e.com', headers } }, 'target')).toMatchObject({ headers });
  });

  it('keeps the URL exactly as written', () => {
    const url = 'https://Example.com/a%20b/?q=1#frag';
    expect(readTarget({ target: { type: 'http', url } }, 'target')).toMatchObject({ url });
  });

  const fiftyOneHeaders = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-H${i}`, 'v']));

  it.each<[string, unknown, ErrorCode, string]>([
    ['missing', undefined, 'MISSING_FIELD', 'target'],
    ['null', null, 'MISSING_FIELD', 'target'],
    ['a string', 'echo', 'INVALID_TARGET', 'target'],
    ['an array', [{ type: 'handler', name: 'echo' }], 'INVALID_TARGET', 'target'],
    ['no type', { name: 'echo' }, 'MISSING_FIELD', 'target.type'],
    ['unknown type', { type: 'grpc', url: 'https://e.com' }, 'VALIDATION_FAILED', 'target.type'],
    ['handler without a name', { type: 'handler' }, 'MISSING_FIELD', 'target.name'],
    ['handler name empty', { type: 'handler', name: '' }, 'VALIDATION_FAILED', 'target.name'],
    ['handler name with a space', { type: 'handler', name: 'send mail' }, 'VALIDATION_FAILED', 'target.name'],
    ['handler name over 128 characters', { type: 'handler', name: 'h'.repeat(129) }, 'VALIDATION_FAILED', 'target.name'],
    ['handler queue empty', { type: 'handler', name: 'echo', queue: '' }, 'VALIDATION_FAILED', 'target.queue'],
    ['handler queue with a colon', { type: 'handler', name: 'echo', queue: 'media:hi' }, 'VALIDATION_FAILED', 'target.queue'],
    ['handler queue over 64 characters', { type: 'handler', name: 'echo', queue: 'q'.repeat(65) }, 'VALIDATION_FAILED', 'target.queue'],
    ['handler queue not a string', { type: 'handler', name: 'echo', queue: 7 }, 'VALIDATION_FAILED', 'target.queue'],
    ['handler name not a string', { type: 'handler', name: 1 }, 'VALIDATION_FAILED', 'target.name'],
    ['handler with an http field', { type: 'handler', name: 'echo', url: 'https://e.com' }, 'UNKNOWN_FIELD', 'target.url'],
    ['http without a url', { type: 'http' }, 'MISSING_FIELD', 'target.url'],
    ['http with a relative url', { type: 'http', url: '/hook' }, 'INVALID_TARGET', 'target.url'],
    ['http with a non-URL', { type: 'http', url: 'not a url' }, 'INVALID_TARGET', 'target.url'],
    ['http with ftp', { type: 'http', url: 'ftp://e.com/file' }, 'INVALID_TARGET', 'target.url'],
    ['http with a file url', { type: 'http', url: 'file:///etc/passwd' }, 'INVALID_TARGET', 'target.url'],
    ['http with credentials in the url', { type: 'http', url: 'https://user:pw@e.com/' }, 'INVALID_TARGET', 'target.url'],
    ['http with a user name in the url', { type: 'http', url: 'https://user@e.com/' }, 'INVALID_TARGET', 'target.url'],
    ['http url over 2048 characters', { type: 'http', url: `https://e.com/${'a'.repeat(2_040)}` }, 'VALIDATION_FAILED', 'target.url'],
    ['http method unknown', { type: 'http', url: 'https://e.com', method: 'HEAD' }, 'VALIDATION_FAILED', 'target.method'],
    ['http method lower case', { type: 'http', url: 'https://e.com', method: 'post' }, 'VALIDATION_FAILED', 'target.method'],
    ['http headers not an object', { type: 'http', url: 'https://e.com', headers: 'X-A: 1' }, 'VALIDATION_FAILED', 'target.headers'],
    ['http header value not a string', { type: 'http', url: 'https://e.com', headers: { 'X-A': 1 } }, 'VALIDATION_FAILED', 'target.headers.X-A'],
    ['http header value over 4096 characters', { type: 'http', url: 'https://e.com', headers: { 'X-A': 'v'.repeat(4_097) } }, 'VALIDATION_FAILED', 'target.headers.X-A'],
    ['http with more than 50 headers', { type: 'http', url: 'https://e.com', headers: fiftyOneHeaders }, 'VALIDATION_FAILED', 'target.headers'],
    ['http timeout zero', { type: 'http', url: 'https://e.com', timeout: 0 }, 'INVALID_DURATION', 'target.timeout'],
    ['http timeout over 24 h', { type: 'http', url: 'https://e.com', timeout: '25h' }, 'INVALID_DURATION', 'target.timeout'],
    ['http timeout unreadable', { type: 'http', url: 'https://e.com', timeout: 'soon' }, 'INVALID_DURATION', 'target.timeout'],
    ['http with a handler field', { type: 'http', url: 'https://e.com', name: 'echo' }, 'UNKNOWN_FIELD', 'target.name'],
    // Header names are RFC 9110 tokens; values cannot break the header line.
    ['http header name with a space', { type: 'http', url: 'https://e.com', headers: { 'X A': '1' } }, 'VALIDATION_FAILED', 'target.headers.X A'],
    ['http header name with a colon', { type: 'http', url: 'https://e.com', headers: { 'X-A:': '1' } }, 'VALIDATION_FAILED', 'target.headers.X-A:'],
    ['http header name empty', { type: 'http', url: 'https://e.com', headers: { '': '1' } }, 'VALIDATION_FAILED', 'target.headers.'],
    ['http header name not ASCII', { type: 'http', url: 'https://e.com', headers: { 'X-Ä': '1' } }, 'VALIDATION_FAILED', 'target.headers.X-Ä'],
    ['http header value with CR LF', { type: 'http', url: 'https://e.com', headers: { 'X-A': 'a\r\nX-Evil: 1' } }, 'VALIDATION_FAILED', 'target.headers.X-A'],
    ['http header value with LF', { type: 'http', url: 'https://e.com', headers: { 'X-A': 'a\nb' } }, 'VALIDATION_FAILED', 'target.headers.X-A'],
    ['http header value with NUL', { type: 'http', url: 'https://e.com', headers: { 'X-A': 'a\u0000b' } }, 'VALIDATION_FAILED', 'target.headers.X-A'],
    // Headers Kairos sets itself or that frame the message.
    ...['Host', 'content-length', 'Transfer-Encoding', 'Connection', 'Kairos-Signature', 'idempotency-key', 'Upgrade', 'TE', 'Trailer', 'Keep-Alive', 'Proxy-Authorization', 'proxy-connection'].map(
      (name): [string, unknown, ErrorCode, string] => [`http header ${name}`, { type: 'http', url: 'https://e.com', headers: { [name]: 'x' } }, 'INVALID_TARGET', `target.headers.${name}`],
    ),
    ['http with a body field', { type: 'http', url: 'https://e.com', body: '{}' }, 'UNKNOWN_FIELD', 'target.body'],
  ])('refuses %s: %s on %s', (_name, target, code, field) => {
    expect(refusal(() => readTarget({ target }, 'target'))).toEqual({ code, field });
  });

  it('names the field under the key it is read from', () => {
    expect(refusal(() => readTarget({ hook: { type: 'handler', name: 'no pe' } }, 'hook'))).toEqual({ code: 'VALIDATION_FAILED', field: 'hook.name' });
  });

  it.each<[string, unknown, { type: 'handler'; name: string; queue: string }]>([
    ['a built-in handler on the default queue', { type: 'handler', name: 'echo' }, { type: 'handler', name: 'echo', queue: 'default' }],
    ['a user handler on its queue', { type: 'handler', name: 'resize-image', queue: 'media' }, { type: 'handler', name: 'resize-image', queue: 'media' }],
    ['a null queue as the default', { type: 'handler', name: 'x', queue: null }, { type: 'handler', name: 'x', queue: 'default' }],
    ['the longest names', { type: 'handler', name: 'h'.repeat(128), queue: 'q.1_-'.repeat(12) + 'abcd' }, { type: 'handler', name: 'h'.repeat(128), queue: 'q.1_-'.repeat(12) + 'abcd' }],
  ])('reads %s', (_name, target, expected) => {
    expect(readTarget({ target }, 'target')).toEqual(expected);
  });
});

describe('readRetryPolicy', () => {
  const defaults = DEFAULT_RETRY_POLICY.backoff;

  it.each<[string, unknown, RetryPolicy]>([
    ['absent: the default', undefined, { maxAttempts: 3, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } }],
    ['null: the default', null, { maxAttempts: 3, backoff: { type: 'exponential', baseMs: 60_000, maxMs: 3_600_000, jitter: 0.1 } }],
    ['empty: the default', {}, { maxAttempts: 3, backoff: defaults }],
    ['maxAttempts only', { maxAttempts: 5 }, { maxAttempts: 5, backoff: defaults }],
    ['maxAttempts 1: no retries', { maxAttempts: 1 }, { maxAttempts: 1, backoff: defaults }],
    ['maxAttempts at its limit of 100', { maxAttempts: 100 }, { maxAttempts: 100, backoff: defaults }],
    ['empty backoff: default backoff', { backoff: {} }, { maxAttempts: 3, backoff: defaults }],
    ['backoff type only', { backoff: { type: 'fixed' } }, { maxAttempts: 3, backoff: { ...defaults, type: 'fixed' } }],
    ['backoff base only', { backoff: { base: '10s' } }, { maxAttempts: 3, backoff: { ...defaults, baseMs: 10_000 } }],
    ['a base above the default max raises the max', { backoff: { base: '2h' } }, { maxAttempts: 3, backoff: { ...defaults, baseMs: 7_200_000, maxMs: 7_200_000 } }],
    ['backoff base zero', { backoff: { base: 0 } }, { maxAttempts: 3, backoff: { ...defaults, baseMs: 0 } }],
    ['backoff max only', { backoff: { max: '2h' } }, { maxAttempts: 3, backoff: { ...defaults, maxMs: 7_200_000 } }],
    ['backoff max at its 7 d limit', { backoff: { max: '7d' } }, { maxAttempts: 3, backoff: { ...defaults, maxMs: 604_800_000 } }],
    ['backoff max equal to base', { backoff: { base: '1m', max: '1m' } }, { maxAttempts: 3, backoff: { ...defaults, baseMs: 60_000, maxMs: 60_000 } }],
    ['backoff jitter 0', { backoff: { jitter: 0 } }, { maxAttempts: 3, backoff: { ...defaults, jitter: 0 } }],
    ['backoff jitter 1', { backoff: { jitter: 1 } }, { maxAttempts: 3, backoff: { ...defaults, jitter: 1 } }],
    [
      'everything, durations in ms',
      { maxAttempts: 7, backoff: { type: 'fixed', base: 5_000, max: 5_000, jitter: 0.25 } },
      { maxAttempts: 7, backoff: { type: 'fixed', baseMs: 5_000, maxMs: 5_000, jitter: 0.25 } },
    ],
  ])('accepts %s', (_name, retry, expected) => {
    expect(readRetryPolicy({ retry })).toEqual(expected);
  });

  it.each<[string, unknown, ErrorCode, string]>([
    ['not an object', 3, 'VALIDATION_FAILED', 'retry'],
    ['an array', [], 'VALIDATION_FAILED', 'retry'],
    ['unknown field', { attempts: 3 }, 'UNKNOWN_FIELD', 'retry.attempts'],
    ['maxAttempts zero', { maxAttempts: 0 }, 'VALIDATION_FAILED', 'retry.maxAttempts'],
    ['maxAttempts over 100', { maxAttempts: 101 }, 'VALIDATION_FAILED', 'retry.maxAttempts'],
    ['maxAttempts fractional', { maxAttempts: 2.5 }, 'VALIDATION_FAILED', 'retry.maxAttempts'],
    ['maxAttempts as a string', { maxAttempts: '3' }, 'VALIDATION_FAILED', 'retry.maxAttempts'],
    ['backoff not an object', { backoff: 'exponential' }, 'VALIDATION_FAILED', 'retry.backoff'],
    ['backoff unknown field', { backoff: { factor: 2 } }, 'UNKNOWN_FIELD', 'retry.backoff.factor'],
    ['backoff type unknown', { backoff: { type: 'linear' } }, 'VALIDATION_FAILED', 'retry.backoff.type'],
    ['backoff base unreadable', { backoff: { base: 'a minute' } }, 'INVALID_DURATION', 'retry.backoff.base'],
    ['backoff base over 24 h', { backoff: { base: '25h', max: '7d' } }, 'INVALID_DURATION', 'retry.backoff.base'],
    ['backoff max over 7 d', { backoff: { max: '8d' } }, 'INVALID_DURATION', 'retry.backoff.max'],
    ['backoff max below base', { backoff: { base: '10m', max: '5m' } }, 'VALIDATION_FAILED', 'retry.backoff.max'],
    ['backoff jitter negative', { backoff: { jitter: -0.1 } }, 'VALIDATION_FAILED', 'retry.backoff.jitter'],
    ['backoff jitter over 1', { backoff: { jitter: 1.5 } }, 'VALIDATION_FAILED', 'retry.backoff.jitter'],
    ['backoff jitter as a string', { backoff: { jitter: '10%' } }, 'VALIDATION_FAILED', 'retry.backoff.jitter'],
  ])('refuses %s: %s on %s', (_name, retry, code, field) => {
    expect(refusal(() => readRetryPolicy({ retry }))).toEqual({ code, field });
  });
});
