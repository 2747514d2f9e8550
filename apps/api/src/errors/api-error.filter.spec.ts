import { describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '@kairos/domain';
import { ApiErrorFilter } from './api-error.filter.js';

describe('ApiErrorFilter.translate', () => {
  const filter = new ApiErrorFilter();
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  it.each<[string, unknown, number, string]>([
    ['a refusal of input', new ValidationError('VALIDATION_FAILED', 'name', 'name is wrong'), 400, 'VALIDATION_FAILED'],
    ['data too large', new ValidationError('PAYLOAD_TOO_LARGE', 'data', 'too large'), 413, 'PAYLOAD_TOO_LARGE'],
    ['an unknown row', new NotFoundError('event', 'e-1'), 404, 'NOT_FOUND'],
    ['a pool with no connection free in time', new Error('timeout exceeded when trying to connect'), 503, 'UNAVAILABLE'],
    ['a ledger that refuses connections', refused, 503, 'UNAVAILABLE'],
    ['a server shutting down', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 503, 'UNAVAILABLE'],
    ['anything else', new Error('boom'), 500, 'INTERNAL'],
  ])('%s', (_name, error, status, code) => {
    const [answered, body] = filter.translate(error);
    expect(answered).toBe(status);
    expect(body.code).toBe(code);
  });
});
