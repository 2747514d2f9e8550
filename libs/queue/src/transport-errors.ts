/** What a transport's refusal means, in one line that says what to do about it. */
import type { TransportConfig } from '@kairos/config';

/** The transport cannot serve right now; the message says why and what to do. */
export class TransportUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportUnavailableError';
  }
}

interface Cause {
  /** Matches the driver's message or error code. */
  test: RegExp;
  /** What it means and what to do, after the driver's own words. */
  redis?: string;
  postgres?: string;
}

/**
 * Known refusals, first match wins. Each says what the operator can change; the driver's own
 * message stays in front of it so nothing is lost in translation.
 */
const CAUSES: readonly Cause[] = [
  {
    test: /unsupported startup parameter/i,
    postgres:
      'a connection pooler in front of Postgres (PgBouncer, for one) refuses the startup parameter the Postgres transport pins its schema with; ' +
      'point DATABASE_URL at Postgres itself, not the pooler, or set REDIS_URL to keep the queues in Redis',
  },
  {
    test: /NOAUTH|WRONGPASS|invalid username-password|AUTH.*(without|called without)/i,
    redis: 'Redis refuses these credentials: put the right user and password in REDIS_URL (redis://user:password@host:port)',
  },
  {
    test: /password authentication failed|no pg_hba\.conf entry|role ".*" does not exist|SASL/i,
    postgres: 'Postgres refuses these credentials: check the user and password in DATABASE_URL, and that pg_hba.conf lets this host in',
  },
  {
    test: /database ".*" does not exist/i,
    postgres: 'the database in DATABASE_URL does not exist: create it, or start Kairos once with a role allowed to create it',
  },
  {
    test: /ECONNREFUSED/i,
    redis: 'nothing listens there: start Redis or point REDIS_URL at a running server',
    postgres: 'nothing listens there: start Postgres or point DATABASE_URL at a running server',
  },
  {
    test: /ENOTFOUND|EAI_AGAIN/i,
    redis: 'the host name does not resolve: check the host in REDIS_URL',
    postgres: 'the host name does not resolve: check the host in DATABASE_URL',
  },
  {
    test: /Connection terminated unexpectedly|ECONNRESET|Connection is closed|socket hang up|EPIPE|Stream isn't writeable/i,
    redis: 'the server closed the connection before answering: check that REDIS_URL names a Redis server (and whether it wants TLS: rediss://)',
    postgres: 'the server closed the connection before answering: check that DATABASE_URL names a Postgres server and that it accepts more connections',
  },
  {
    test: /timeout|timed out|did not answer|ETIMEDOUT/i,
    redis: 'no answer in time: check that Redis runs and that the network lets this host reach it',
    postgres: 'no answer in time: check that Postgres runs and that the network lets this host reach it',
  },
];

/** Where the transport lives, without secrets: `Redis at host:port` or `the Postgres transport (schema …)`. */
function where(config: TransportConfig): string {
  if (config.kind === 'postgres') return `the Postgres transport (schema ${config.schema})`;
  const url = new URL(config.url);
  return `Redis at ${url.hostname}:${url.port || 6379}`;
}

/** `error`, raised while reaching the transport `config` describes, as one line an operator can act on. */
export function explainTransportError(config: TransportConfig, error: Error & { code?: string }): string {
  if (error instanceof TransportUnavailableError) return error.message;
  // Node reports a refused dual-stack connect as an AggregateError with an empty message.
  const message = error.message || error.name;
  const said = `${message}${error.code && !message.includes(error.code) ? ` (${error.code})` : ''}`;
  const cause = CAUSES.find((c) => c.test.test(said) && c[config.kind] !== undefined);
  return `cannot reach ${where(config)}: ${said}${cause ? `; ${cause[config.kind]}` : ''}`;
}
