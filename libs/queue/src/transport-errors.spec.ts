import { describe, expect, it } from 'vitest';
import type { TransportConfig } from '@kairos/config';
import { nextBackoff, TRANSPORT_BACKOFF } from './supervised-worker.js';
import { TransportUnavailableError, explainTransportError } from './transport-errors.js';

const REDIS: TransportConfig = { kind: 'redis', url: 'redis://:secret@cache.internal:6380/2' };
const POSTGRES: TransportConfig = { kind: 'postgres', url: 'postgres://app:secret@db.internal:6432/kairos', schema: 'kairos_transport' };

function failure(message: string, code?: string): Error & { code?: string } {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('explainTransportError', () => {
  it.each([
    [REDIS, failure('connect ECONNREFUSED 10.0.0.7:6380', 'ECONNREFUSED'), 'cannot reach Redis at cache.internal:6380: connect ECONNREFUSED 10.0.0.7:6380; nothing listens there: start Redis or point REDIS_URL at a running server'],
    [REDIS, failure('NOAUTH Authentication required.'), 'cannot reach Redis at cache.internal:6380: NOAUTH Authentication required.; Redis refuses these credentials: put the right user and password in REDIS_URL (redis://user:password@host:port)'],
    [REDIS, failure('WRONGPASS invalid username-password pair or user is disabled.'), 'cannot reach Redis at cache.internal:6380: WRONGPASS invalid username-password pair or user is disabled.; Redis refuses these credentials: put the right user and password in REDIS_URL (redis://user:password@host:port)'],
    [REDIS, failure('Connection is closed.'), 'cannot reach Redis at cache.internal:6380: Connection is closed.; the server closed the connection before answering: check that REDIS_URL names a Redis server (and whether it wants TLS: rediss://)'],
    [REDIS, failure('getaddrinfo ENOTFOUND cache.internal', 'ENOTFOUND'), 'cannot reach Redis at cache.internal:6380: getaddrinfo ENOTFOUND cache.internal; the host name does not resolve: check the host in REDIS_URL'],
    [REDIS, failure('Redis did not answer PING'), 'cannot reach Redis at cache.internal:6380: Redis did not answer PING; no answer in time: check that Redis runs and that the network lets this host reach it'],
    [POSTGRES, failure('unsupported startup parameter: options', '08P01'), 'cannot reach the Postgres transport (schema kairos_transport): unsupported startup parameter: options (08P01); a connection pooler in front of Postgres (PgBouncer, for one) refuses the startup parameter the Postgres transport pins its schema with; point DATABASE_URL at Postgres itself, not the pooler, or set REDIS_URL to keep the queues in Redis'],
    [POSTGRES, failure('password authentication failed for user "app"', '28P01'), 'cannot reach the Postgres transport (schema kairos_transport): password authentication failed for user "app" (28P01); Postgres refuses these credentials: check the user and password in DATABASE_URL, and that pg_hba.conf lets this host in'],
    [POSTGRES, failure('Connection terminated unexpectedly'), 'cannot reach the Postgres transport (schema kairos_transport): Connection terminated unexpectedly; the server closed the connection before answering: check that DATABASE_URL names a Postgres server and that it accepts more connections'],
    [POSTGRES, failure('database "kairos" does not exist', '3D000'), 'cannot reach the Postgres transport (schema kairos_transport): database "kairos" does not exist (3D000); the database in DATABASE_URL does not exist: create it, or start Kairos once with a role allowed to create it'],
    [POSTGRES, failure('timeout exceeded when trying to connect'), 'cannot reach the Postgres transport (schema kairos_transport): timeout exceeded when trying to connect; no answer in time: check that Postgres runs and that the network lets this host reach it'],
    // Node's refused dual-stack connect: an AggregateError with no message of its own.
    [POSTGRES, Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }), 'cannot reach the Postgres transport (schema kairos_transport): AggregateError (ECONNREFUSED); nothing listens there: start Postgres or point DATABASE_URL at a running server'],
    // A cause that belongs to the other transport adds nothing; an unknown one keeps the driver's words.
    [POSTGRES, failure('NOAUTH Authentication required.'), 'cannot reach the Postgres transport (schema kairos_transport): NOAUTH Authentication required.'],
    [REDIS, failure('ERR unknown command'), 'cannot reach Redis at cache.internal:6380: ERR unknown command'],
  ])('%#: %s', (config, error, expected) => {
    expect(explainTransportError(config, error)).toBe(expected);
  });

  it('never shows the credentials of the URL', () => {
    for (const config of [REDIS, POSTGRES]) expect(explainTransportError(config, failure('boom'))).not.toContain('secret');
  });

  it('keeps an error it already explained as it is', () => {
    const explained = new TransportUnavailableError('cannot reach Redis at x:1: said once');
    expect(explainTransportError(REDIS, explained)).toBe('cannot reach Redis at x:1: said once');
  });
});

describe('nextBackoff', () => {
  it('starts at the initial wait, doubles, and stops at the largest', () => {
    const waits: number[] = [];
    let wait: number | null = null;
    for (let i = 0; i < 8; i++) waits.push((wait = nextBackoff(wait, TRANSPORT_BACKOFF)));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });
});
