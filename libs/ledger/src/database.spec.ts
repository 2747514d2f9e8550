import { describe, expect, it } from 'vitest';
import { isUnreachable, retryUnreachable } from './database.js';

const withCode = (code: string, message = 'failed'): Error => Object.assign(new Error(message), { code });

describe('isUnreachable', () => {
  it.each<[string, unknown, boolean]>([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6432'), true],
    ['a reset connection', withCode('ECONNRESET'), true],
    ['a broken pipe', withCode('EPIPE'), true],
    ['a connection timeout', withCode('ETIMEDOUT'), true],
    ['an unresolvable host', withCode('ENOTFOUND'), true],
    ['an administrator ending the session (a restart)', withCode('57P01', 'terminating connection due to administrator command'), true],
    ['a server shutting down', withCode('57P02'), true],
    ['a server starting up', withCode('57P03', 'the database system is starting up'), true],
    ['a connection exception (class 08)', withCode('08006'), true],
    ['a server with every connection slot taken', withCode('53300', 'sorry, too many clients already'), true],
    ['the driver: connection terminated', new Error('Connection terminated unexpectedly'), true],
    ['the driver: a client not queryable', new Error('Client has encountered a connection error and is not queryable'), true],
    ['the driver: no connection from the pool in time', new Error('timeout exceeded when trying to connect'), true],
    ['a unique violation', withCode('23505', 'duplicate key value'), false],
    ['a deadlock', withCode('40P01'), false],
    ['a syntax error', withCode('42601'), false],
    ['a statement timeout', withCode('57014', 'canceling statement due to statement timeout'), false],
    ['a coded error that mentions a terminated connection', withCode('P0001', 'connection terminated by the caller'), false],
    ['a plain error', new Error('the handler failed'), false],
    ['not an error', 'ECONNREFUSED', false],
  ])('%s: %s', (_name, error, expected) => {
    expect(isUnreachable(error)).toBe(expected);
  });
});

describe('retryUnreachable', () => {
  it('retries while Postgres cannot be reached, then answers', async () => {
    let calls = 0;
    const answer = await retryUnreachable(async () => {
      calls += 1;
      if (calls < 3) throw withCode('ECONNREFUSED');
      return 'written';
    }, 5_000);
    expect([answer, calls]).toEqual(['written', 3]);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    const refused = retryUnreachable(async () => {
      calls += 1;
      throw withCode('23505');
    }, 5_000);
    await expect(refused).rejects.toMatchObject({ code: '23505' });
    expect(calls).toBe(1);
  });

  it('gives up once its time is spent, with the last failure', async () => {
    let calls = 0;
    const started = performance.now();
    const refused = retryUnreachable(async () => {
      calls += 1;
      throw withCode('ECONNREFUSED');
    }, 250);
    await expect(refused).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // 100 ms, then 200 ms would pass the deadline: two calls in about 100 ms.
    expect(calls).toBe(2);
    expect(performance.now() - started).toBeLessThan(250);
  });
});
