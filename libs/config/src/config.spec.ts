import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, ROLES, configVariables, describeDatabase, loadConfig, redactUrl, type KairosConfig } from './index.js';
import { configurationTable } from './config-table.js';

describe('loadConfig', () => {
  it('has a default for everything, so an empty environment starts all three roles on the embedded Postgres and the Postgres transport', () => {
    expect(loadConfig({})).toEqual({
      roles: ['api', 'scheduler', 'worker'],
      databaseUrl: 'postgresql://postgres@127.0.0.1:54329/kairos',
      databaseDirectUrl: 'postgresql://postgres@127.0.0.1:54329/kairos',
      embeddedPostgres: { dataDir: '.kairos/pg', port: 54329 },
      databasePoolSize: 10,
      migrationsDir: null,
      transport: { kind: 'postgres', url: 'postgresql://postgres@127.0.0.1:54329/kairos', schema: 'kairos_transport' },
      queuePrefix: 'kairos',
      logLevel: 'log',
      logFormat: 'auto',
      shutdownGraceMs: 10_000,
      api: {
        host: '127.0.0.1',
        port: 3000,
        auth: 'optional',
        sessionTtlMs: 12 * 3_600_000,
        rateLimit: 100,
        graphqlIntrospection: true,
        signingSecretGraceMs: 24 * 3_600_000,
      },
      scheduler: {
        leaderTtlMs: 10_000,
        tickMaxIdleMs: 1_000,
        tickBatchSize: 2_000,
        lookaheadMs: 15_000,
        relayIntervalMs: 1_000,
        reconcileIntervalMs: 5_000,
        reconcileGraceMs: 10_000,
        reaperIntervalMs: 2_000,
        reaperSkewMs: 5_000,
        reaperBackoffMs: 5_000,
        crashBudget: 3,
      },
      worker: { concurrency: 256, dispatchBatch: 64, runLeaseTtlMs: 30_000, httpAllowList: [], startMarginMs: 250, version: null, upgrade: 'pinned' },
      tracing: { tracesUrl: null, serviceName: null },
      alerts: { publicUrl: null, retryWindowMs: 86_400_000, deliveryTimeoutMs: 10_000 },
      retention: { retentionMs: 30 * 86_400_000, deadLetterRetentionMs: 90 * 86_400_000, eventRetentionMs: 7 * 86_400_000, batchSize: 500, intervalMs: 60_000 },
    } satisfies KairosConfig);
  });

  it.each<[string, Record<string, string>, 'optional' | 'required']>([
    ['loopback by default: open', {}, 'optional'],
    ['127.0.0.1: open', { HOST: '127.0.0.1' }, 'optional'],
    ['127.8.9.10: open', { HOST: '127.8.9.10' }, 'optional'],
    ['::1: open', { HOST: '::1' }, 'optional'],
    ['localhost: open', { HOST: 'localhost' }, 'optional'],
    ['0.0.0.0: keys required', { HOST: '0.0.0.0' }, 'required'],
    [':: (every IPv6 address): keys required', { HOST: '::' }, 'required'],
    ['a LAN address: keys required', { HOST: '192.168.1.20' }, 'required'],
    ['a host name: keys required', { HOST: 'api.internal' }, 'required'],
    ['0.0.0.0 with KAIROS_AUTH=optional: as told', { HOST: '0.0.0.0', KAIROS_AUTH: 'optional' }, 'optional'],
    ['loopback with KAIROS_AUTH=required: as told', { HOST: '127.0.0.1', KAIROS_AUTH: 'required' }, 'required'],
  ])('KAIROS_AUTH defaults from HOST: %s', (_name, env, expected) => {
    expect(loadConfig(env).api.auth).toBe(expected);
  });

  it('turns GraphQL introspection off in production unless told otherwise', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).api.graphqlIntrospection).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', KAIROS_GRAPHQL_INTROSPECTION: 'true' }).api.graphqlIntrospection).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).api.graphqlIntrospection).toBe(true);
  });

  it('treats empty and blank variables as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '   ', KAIROS_ROLES: ' ', KAIROS_MIGRATIONS_DIR: '' })).toEqual(loadConfig({}));
  });

  it('uses the roles the entry point defaults to when KAIROS_ROLES is unset', () => {
    expect(loadConfig({}, ['worker']).roles).toEqual(['worker']);
    expect(loadConfig({ KAIROS_ROLES: 'api' }, ['worker']).roles).toEqual(['api']);
  });

  it('does not share the default roles array between calls', () => {
    const first = loadConfig({});
    first.roles.pop();
    expect(loadConfig({}).roles).toEqual([...ROLES]);
  });

  it.each<[string, string, string[]]>([
    ['one role', 'api', ['api']],
    ['two roles', 'scheduler,worker', ['scheduler', 'worker']],
    ['spaces around names', ' api , worker ', ['api', 'worker']],
    ['repeats collapse', 'worker,worker,api', ['worker', 'api']],
    ['a trailing comma is ignored', 'api,', ['api']],
    ['all three', 'worker,scheduler,api', ['worker', 'scheduler', 'api']],
  ])('KAIROS_ROLES: %s', (_name, value, expected) => {
    expect(loadConfig({ KAIROS_ROLES: value }).roles).toEqual(expected);
  });

  type Pick = (c: KairosConfig) => unknown;
  /** A variable, a value, what it sets and to what, and the other variables it is read with. */
  const accepted: [string, string, Pick, unknown, Record<string, string>?][] = [
    ['DATABASE_URL', 'postgres://u:p@db:5432/k', (c) => c.databaseUrl, 'postgres://u:p@db:5432/k'],
    ['DATABASE_URL', 'postgresql://db/k?sslmode=require', (c) => c.databaseUrl, 'postgresql://db/k?sslmode=require'],
    ['DATABASE_URL', '  postgresql://db/k  ', (c) => c.databaseUrl, 'postgresql://db/k'],
    ['DATABASE_POOL_SIZE', '1', (c) => c.databasePoolSize, 1],
    ['DATABASE_POOL_SIZE', '200', (c) => c.databasePoolSize, 200],
    ['KAIROS_MIGRATIONS_DIR', '/srv/kairos/migrations', (c) => c.migrationsDir, '/srv/kairos/migrations'],
    ['DATABASE_URL', 'postgres://u:p@db:5432/k', (c) => c.embeddedPostgres, null],
    ['DATABASE_URL', 'postgres://u:p@db:5432/k', (c) => c.transport, { kind: 'postgres', url: 'postgres://u:p@db:5432/k', schema: 'kairos_transport' }],
    ['KAIROS_DATA_DIR', '/var/lib/kairos', (c) => c.embeddedPostgres, { dataDir: '/var/lib/kairos/pg', port: 54329 }],
    ['KAIROS_EMBEDDED_PG_PORT', '5555', (c) => c.databaseUrl, 'postgresql://postgres@127.0.0.1:5555/kairos'],
    ['REDIS_URL', 'rediss://:pw@cache:6380/2', (c) => c.transport, { kind: 'redis', url: 'rediss://:pw@cache:6380/2', topology: { kind: 'single' } }],
    ['REDIS_URL', 'redis://cache', (c) => c.transport, { kind: 'redis', url: 'redis://cache', topology: { kind: 'single' } }],
    // A pooler in front of Postgres: DATABASE_URL is marked as the pooler's, sessions go direct.
    ['DATABASE_DIRECT_URL', 'postgres://db:5432/k', (c) => c.databaseDirectUrl, 'postgres://db:5432/k', { DATABASE_URL: 'postgres://pooler:6432/k' }],
    ['DATABASE_DIRECT_URL', 'postgres://db:5432/k', (c) => c.databaseUrl, 'postgres://pooler:6432/k?pgbouncer=true', { DATABASE_URL: 'postgres://pooler:6432/k' }],
    ['DATABASE_DIRECT_URL', 'postgres://db:5432/k', (c) => c.transport, { kind: 'postgres', url: 'postgres://db:5432/k', schema: 'kairos_transport' }, { DATABASE_URL: 'postgres://pooler:6432/k' }],
    ['DATABASE_URL', 'postgres://pooler:6432/k?pgbouncer=true', (c) => c.databaseDirectUrl, null, { REDIS_URL: 'redis://cache' }],
    [
      'REDIS_CLUSTER_NODES',
      '10.0.0.1:7000, 10.0.0.2:7001',
      (c) => c.transport,
      { kind: 'redis', url: 'redis://10.0.0.1:7000', topology: { kind: 'cluster', nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }] } },
    ],
    [
      'REDIS_CLUSTER_NODES',
      'rediss://kairos:pw@a:7000,b:7001',
      (c) => c.transport,
      { kind: 'redis', url: 'rediss://kairos:pw@a:7000', topology: { kind: 'cluster', nodes: [{ host: 'a', port: 7000 }, { host: 'b', port: 7001 }] } },
    ],
    ['REDIS_SENTINELS', 's1:26379,s2:26380', (c) => c.transport, { kind: 'redis', url: 'redis://s1:26379', topology: { kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }], name: 'mymaster' } }],
    ['REDIS_SENTINEL_NAME', 'cache', (c) => c.transport, { kind: 'redis', url: 'redis://s1:26379', topology: { kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], name: 'cache' } }, { REDIS_SENTINELS: 's1:26379' }],
    ['KAIROS_QUEUE_PREFIX', 'kairos-test_1.a:b', (c) => c.queuePrefix, 'kairos-test_1.a:b'],
    ['KAIROS_QUEUE_SHARDS', '6', (c) => c.transport, { kind: 'redis', url: 'redis://a:7000', topology: { kind: 'cluster', nodes: [{ host: 'a', port: 7000 }] }, shards: 6 }, { REDIS_CLUSTER_NODES: 'a:7000' }],
    ['KAIROS_QUEUE_SHARDS', '64', (c) => c.transport, { kind: 'redis', url: 'redis://cache', topology: { kind: 'single' }, shards: 64 }, { REDIS_URL: 'redis://cache' }],
    ['KAIROS_QUEUE_SHARDS', '1', (c) => c.transport, { kind: 'redis', url: 'redis://a:7000', topology: { kind: 'cluster', nodes: [{ host: 'a', port: 7000 }] }, shards: 1 }, { REDIS_CLUSTER_NODES: 'a:7000' }],
    ['LOG_LEVEL', 'error', (c) => c.logLevel, 'error'],
    ['LOG_LEVEL', 'warn', (c) => c.logLevel, 'warn'],
    ['LOG_LEVEL', 'debug', (c) => c.logLevel, 'debug'],
    ['LOG_LEVEL', 'verbose', (c) => c.logLevel, 'verbose'],
    ['LOG_FORMAT', 'json', (c) => c.logFormat, 'json'],
    ['LOG_FORMAT', 'pretty', (c) => c.logFormat, 'pretty'],
    ['LOG_FORMAT', 'text', (c) => c.logFormat, 'pretty'],
    ['KAIROS_SHUTDOWN_GRACE', '30s', (c) => c.shutdownGraceMs, 30_000],
    ['KAIROS_SHUTDOWN_GRACE', '2500', (c) => c.shutdownGraceMs, 2_500],
    ['HOST', '0.0.0.0', (c) => c.api.host, '0.0.0.0'],
    ['HOST', '::', (c) => c.api.host, '::'],
    ['HOST', 'api.internal', (c) => c.api.host, 'api.internal'],
    ['PORT', '0', (c) => c.api.port, 0],
    ['PORT', '8080', (c) => c.api.port, 8080],
    ['PORT', '65535', (c) => c.api.port, 65535],
    ['KAIROS_LEADER_TTL', '15s', (c) => c.scheduler.leaderTtlMs, 15_000],
    ['KAIROS_TICK_MAX_IDLE', '250ms', (c) => c.scheduler.tickMaxIdleMs, 250],
    ['KAIROS_TICK_BATCH', '1', (c) => c.scheduler.tickBatchSize, 1],
    ['KAIROS_TICK_BATCH', '10000', (c) => c.scheduler.tickBatchSize, 10_000],
    ['KAIROS_LOOKAHEAD', '2s', (c) => c.scheduler.lookaheadMs, 2_000],
    ['KAIROS_DISPATCH_BATCH', '1', (c) => c.worker.dispatchBatch, 1],
    ['KAIROS_DISPATCH_BATCH', '1000', (c) => c.worker.dispatchBatch, 1_000],
    ['KAIROS_START_MARGIN', '0', (c) => c.worker.startMarginMs, 0],
    ['KAIROS_START_MARGIN', '1s', (c) => c.worker.startMarginMs, 1_000],
    ['KAIROS_RELAY_INTERVAL', '500ms', (c) => c.scheduler.relayIntervalMs, 500],
    ['KAIROS_RECONCILE_INTERVAL', '1m', (c) => c.scheduler.reconcileIntervalMs, 60_000],
    ['KAIROS_RECONCILE_GRACE', '1m30s', (c) => c.scheduler.reconcileGraceMs, 90_000],
    ['KAIROS_REAPER_INTERVAL', '3000', (c) => c.scheduler.reaperIntervalMs, 3_000],
    ['KAIROS_REAPER_SKEW', '1s', (c) => c.scheduler.reaperSkewMs, 1_000],
    ['KAIROS_REAPER_BACKOFF', '10s', (c) => c.scheduler.reaperBackoffMs, 10_000],
    ['KAIROS_CRASH_BUDGET', '1', (c) => c.scheduler.crashBudget, 1],
    ['KAIROS_CRASH_BUDGET', '100', (c) => c.scheduler.crashBudget, 100],
    ['KAIROS_WORKER_CONCURRENCY', '1', (c) => c.worker.concurrency, 1],
    ['KAIROS_WORKER_CONCURRENCY', '1000', (c) => c.worker.concurrency, 1_000],
    ['KAIROS_RUN_LEASE_TTL', '1m', (c) => c.worker.runLeaseTtlMs, 60_000],
    ['KAIROS_HTTP_ALLOWLIST', '127.0.0.1', (c) => c.worker.httpAllowList, ['127.0.0.1']],
    ['KAIROS_WORKER_VERSION', '2026.12.03-1', (c) => c.worker.version, '2026.12.03-1'],
    ['KAIROS_WORKER_UPGRADE', 'auto', (c) => c.worker.upgrade, 'auto'],
    ['KAIROS_AUTH', 'required', (c) => c.api.auth, 'required'],
    ['KAIROS_SESSION_TTL', '1h', (c) => c.api.sessionTtlMs, 3_600_000],
    ['KAIROS_RATE_LIMIT', '0', (c) => c.api.rateLimit, 0],
    ['KAIROS_RATE_LIMIT', '5000', (c) => c.api.rateLimit, 5_000],
    ['KAIROS_GRAPHQL_INTROSPECTION', 'false', (c) => c.api.graphqlIntrospection, false],
    ['KAIROS_SIGNING_SECRET_GRACE', '1h', (c) => c.api.signingSecretGraceMs, 3_600_000],
    ['KAIROS_RETENTION', '7d', (c) => c.retention.retentionMs, 7 * 86_400_000],
    ['KAIROS_RETENTION', '5s', (c) => c.retention.retentionMs, 5_000],
    ['KAIROS_DEAD_LETTER_RETENTION', '365d', (c) => c.retention.deadLetterRetentionMs, 365 * 86_400_000],
    ['KAIROS_EVENT_RETENTION', '30d', (c) => c.retention.eventRetentionMs, 30 * 86_400_000],
    ['KAIROS_EVENT_RETENTION', '1h', (c) => c.retention.eventRetentionMs, 3_600_000],
    ['KAIROS_RETENTION_BATCH', '1', (c) => c.retention.batchSize, 1],
    ['KAIROS_RETENTION_BATCH', '10000', (c) => c.retention.batchSize, 10_000],
    ['KAIROS_RETENTION_INTERVAL', '200ms', (c) => c.retention.intervalMs, 200],
    ['KAIROS_PUBLIC_URL', 'https://kairos.example.com', (c) => c.alerts.publicUrl, 'https://kairos.example.com'],
    ['KAIROS_SUBSCRIPTION_RETRY_WINDOW', '2h', (c) => c.alerts.retryWindowMs, 7_200_000],
    ['KAIROS_SUBSCRIPTION_TIMEOUT', '5s', (c) => c.alerts.deliveryTimeoutMs, 5_000],
    ['KAIROS_HTTP_ALLOWLIST', ' localhost , 10.0.0.0/8 ,,', (c) => c.worker.httpAllowList, ['localhost', '10.0.0.0/8']],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://collector:4318', (c) => c.tracing.tracesUrl, 'http://collector:4318/v1/traces'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'https://otel.example/base/', (c) => c.tracing.tracesUrl, 'https://otel.example/base/v1/traces'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'http://collector:4318/custom', (c) => c.tracing.tracesUrl, 'http://collector:4318/custom'],
    ['OTEL_SERVICE_NAME', 'billing-scheduler', (c) => c.tracing.serviceName, 'billing-scheduler'],
    ['KAIROS_ROLES', 'worker', (c) => c.roles, ['worker']],
  ];
  it.each(accepted)('%s=%j', (name, value, pick, expected, others = {}) => {
    expect(pick(loadConfig({ ...others, [name]: value }))).toEqual(expected);
    // The row sets something other than the others alone do, so it shows the variable is read.
    expect(pick(loadConfig(others))).not.toEqual(expected);
  });

  /** A variable, a value, the message, and the other variables it is read with. */
  const refused: [string, string, RegExp, Record<string, string>?][] = [
    ['KAIROS_ROLES', 'api,cron', /^KAIROS_ROLES: unknown role "cron"; use a comma-separated list of api, scheduler, worker$/],
    ['KAIROS_ROLES', 'API', /KAIROS_ROLES: unknown role "API"/],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL is not a valid URL$/],
    ['DATABASE_URL', 'mysql://db/k', /^DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/$/],
    ['KAIROS_EMBEDDED_PG_PORT', '0', /^KAIROS_EMBEDDED_PG_PORT="0" must be an integer from 1 to 65535$/],
    ['DATABASE_URL', 'redis://db', /DATABASE_URL must start with postgres:\/\//],
    ['DATABASE_POOL_SIZE', '0', /^DATABASE_POOL_SIZE="0" must be an integer from 1 to 200$/],
    ['DATABASE_POOL_SIZE', '201', /DATABASE_POOL_SIZE="201" must be an integer from 1 to 200/],
    ['DATABASE_POOL_SIZE', '2.5', /DATABASE_POOL_SIZE="2.5" must be an integer/],
    ['DATABASE_POOL_SIZE', 'ten', /DATABASE_POOL_SIZE="ten" must be an integer/],
    ['REDIS_URL', 'localhost:6379', /^REDIS_URL must start with redis:\/\/ or rediss:\/\/$/],
    ['REDIS_URL', 'http://cache:6379', /REDIS_URL must start with redis:\/\/ or rediss:\/\//],
    ['REDIS_URL', '://', /^REDIS_URL is not a valid URL$/],
    ['KAIROS_QUEUE_PREFIX', 'has space', /^KAIROS_QUEUE_PREFIX="has space" is not valid/],
    ['KAIROS_QUEUE_PREFIX', 'a/b', /KAIROS_QUEUE_PREFIX="a\/b" is not valid/],
    ['KAIROS_QUEUE_PREFIX', 'p'.repeat(65), /KAIROS_QUEUE_PREFIX="p+" is not valid/],
    ['LOG_LEVEL', 'info', /^LOG_LEVEL="info" is not one of error, warn, log, debug, verbose$/],
    ['LOG_LEVEL', 'LOG', /LOG_LEVEL="LOG" is not one of/],
    ['LOG_FORMAT', 'yaml', /^LOG_FORMAT="yaml" is not one of auto, json, pretty, text$/],
    ['KAIROS_SHUTDOWN_GRACE', '10 s', /KAIROS_SHUTDOWN_GRACE="10 s": duration '10 s' cannot be read/],
    ['KAIROS_SHUTDOWN_GRACE', '-1s', /KAIROS_SHUTDOWN_GRACE="-1s": duration '-1s' is negative/],
    ['HOST', 'bad host', /^HOST="bad host" is not valid/],
    ['KAIROS_AUTH', 'off', /^KAIROS_AUTH="off" is not one of optional, required$/],
    ['KAIROS_RATE_LIMIT', '-5', /^KAIROS_RATE_LIMIT="-5" must be an integer/],
    ['KAIROS_GRAPHQL_INTROSPECTION', 'yes', /^KAIROS_GRAPHQL_INTROSPECTION="yes" must be true or false$/],
    ['HOST', 'http://x', /HOST="http:\/\/x" is not valid/],
    ['PORT', '65536', /^PORT="65536" must be an integer from 0 to 65535$/],
    ['PORT', '-1', /PORT="-1" must be an integer from 0 to 65535/],
    ['PORT', '80a', /PORT="80a" must be an integer/],
    ['KAIROS_LEADER_TTL', '10x', /^KAIROS_LEADER_TTL="10x": duration '10x' has an unknown unit 'x'/],
    ['KAIROS_TICK_MAX_IDLE', '1.5s', /^KAIROS_TICK_MAX_IDLE="1.5s": /],
    ['KAIROS_TICK_BATCH', '0', /^KAIROS_TICK_BATCH="0" must be an integer from 1 to 10000$/],
    ['KAIROS_TICK_BATCH', '10001', /KAIROS_TICK_BATCH="10001"/],
    ['KAIROS_LOOKAHEAD', 'soon', /^KAIROS_LOOKAHEAD="soon": /],
    ['KAIROS_RELAY_INTERVAL', '1 s', /^KAIROS_RELAY_INTERVAL="1 s": /],
    ['KAIROS_RECONCILE_INTERVAL', '5sec', /^KAIROS_RECONCILE_INTERVAL="5sec": /],
    ['KAIROS_RECONCILE_GRACE', 'x', /^KAIROS_RECONCILE_GRACE="x": /],
    ['KAIROS_REAPER_INTERVAL', '2S', /^KAIROS_REAPER_INTERVAL="2S": /],
    ['KAIROS_RETENTION', '500ms', /^KAIROS_RETENTION="500ms" must be at least 1000 ms$/],
    ['KAIROS_RETENTION', 'forever', /^KAIROS_RETENTION="forever": /],
    ['KAIROS_DEAD_LETTER_RETENTION', '0', /^KAIROS_DEAD_LETTER_RETENTION="0" must be at least 1000 ms$/],
    ['KAIROS_EVENT_RETENTION', '10ms', /^KAIROS_EVENT_RETENTION="10ms" must be at least 1000 ms$/],
    ['KAIROS_EVENT_RETENTION', 'a week', /^KAIROS_EVENT_RETENTION="a week": /],
    ['KAIROS_RETENTION_BATCH', '0', /^KAIROS_RETENTION_BATCH="0" must be an integer from 1 to 10000$/],
    ['KAIROS_RETENTION_INTERVAL', '5ms', /^KAIROS_RETENTION_INTERVAL="5ms" must be at least 10 ms$/],
    ['KAIROS_PUBLIC_URL', 'kairos.example.com', /^KAIROS_PUBLIC_URL is not a valid URL$/],
    ['KAIROS_SUBSCRIPTION_RETRY_WINDOW', '10ms', /^KAIROS_SUBSCRIPTION_RETRY_WINDOW="10ms" must be at least 1000 ms$/],
    ['KAIROS_SUBSCRIPTION_TIMEOUT', 'soon', /^KAIROS_SUBSCRIPTION_TIMEOUT="soon": /],
    ['KAIROS_REAPER_SKEW', '5s5s', /^KAIROS_REAPER_SKEW="5s5s": /],
    ['KAIROS_REAPER_BACKOFF', '1e3', /^KAIROS_REAPER_BACKOFF="1e3": /],
    ['KAIROS_CRASH_BUDGET', '0', /^KAIROS_CRASH_BUDGET="0" must be an integer from 1 to 100$/],
    ['KAIROS_CRASH_BUDGET', '101', /KAIROS_CRASH_BUDGET="101"/],
    ['KAIROS_WORKER_CONCURRENCY', '0', /^KAIROS_WORKER_CONCURRENCY="0" must be an integer from 1 to 1000$/],
    ['KAIROS_WORKER_CONCURRENCY', '1001', /KAIROS_WORKER_CONCURRENCY="1001"/],
    ['KAIROS_RUN_LEASE_TTL', '30 s', /^KAIROS_RUN_LEASE_TTL="30 s": /],
    ['KAIROS_RUN_LEASE_TTL', '30', /^KAIROS_RUN_LEASE_TTL="30" must be at least 1000 ms$/],
    ['KAIROS_LEADER_TTL', '0s', /^KAIROS_LEADER_TTL="0s" must be at least 1000 ms$/],
    ['KAIROS_RELAY_INTERVAL', '0s', /^KAIROS_RELAY_INTERVAL="0s" must be at least 10 ms$/],
    ['KAIROS_TICK_MAX_IDLE', '1ms', /^KAIROS_TICK_MAX_IDLE="1ms" must be at least 10 ms$/],
    ['DATABASE_POOL_SIZE', '0x10', /DATABASE_POOL_SIZE="0x10" must be an integer/],
    ['PORT', '1e3', /PORT="1e3" must be an integer/],
    ['KAIROS_AUTH', 'on', /^KAIROS_AUTH="on" is not one of optional, required$/],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', /^OTEL_EXPORTER_OTLP_ENDPOINT must start with http:\/\/ or https:\/\/$/],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'not a url', /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a valid URL$/],
    ['KAIROS_SESSION_TTL', '999', /^KAIROS_SESSION_TTL="999" must be at least 1000 ms$/],
    ['KAIROS_SESSION_TTL', '12 h', /^KAIROS_SESSION_TTL="12 h": duration '12 h' cannot be read/],
    ['KAIROS_RATE_LIMIT', '1000001', /^KAIROS_RATE_LIMIT="1000001" must be an integer from 0 to 1000000$/],
    ['KAIROS_SIGNING_SECRET_GRACE', '1 day', /^KAIROS_SIGNING_SECRET_GRACE="1 day": /],
    ['KAIROS_SIGNING_SECRET_GRACE', '-1h', /^KAIROS_SIGNING_SECRET_GRACE="-1h": duration '-1h' is negative/],
    ['KAIROS_LOOKAHEAD', '-2s', /^KAIROS_LOOKAHEAD="-2s": duration '-2s' is negative/],
    ['KAIROS_RECONCILE_INTERVAL', '9ms', /^KAIROS_RECONCILE_INTERVAL="9ms" must be at least 10 ms$/],
    ['KAIROS_REAPER_INTERVAL', '0', /^KAIROS_REAPER_INTERVAL="0" must be at least 10 ms$/],
    ['KAIROS_DEAD_LETTER_RETENTION', 'never', /^KAIROS_DEAD_LETTER_RETENTION="never": /],
    ['KAIROS_RETENTION_BATCH', '10001', /^KAIROS_RETENTION_BATCH="10001" must be an integer from 1 to 10000$/],
    ['KAIROS_RETENTION_INTERVAL', 'hourly', /^KAIROS_RETENTION_INTERVAL="hourly": /],
    ['KAIROS_GRAPHQL_INTROSPECTION', 'TRUE', /^KAIROS_GRAPHQL_INTROSPECTION="TRUE" must be true or false$/],
    ['LOG_FORMAT', 'JSON', /^LOG_FORMAT="JSON" is not one of auto, json, pretty, text$/],
    ['KAIROS_WORKER_UPGRADE', 'always', /^KAIROS_WORKER_UPGRADE="always" is not one of pinned, auto$/],
    ['KAIROS_WORKER_CONCURRENCY', 'many', /^KAIROS_WORKER_CONCURRENCY="many" must be an integer from 1 to 1000$/],
    ['DATABASE_DIRECT_URL', 'postgres://db/k', /^DATABASE_DIRECT_URL needs DATABASE_URL: set both/],
    ['KAIROS_START_MARGIN', '6s', /^KAIROS_START_MARGIN="6s" must be at most 5000 ms$/],
    ['KAIROS_DISPATCH_BATCH', '0', /^KAIROS_DISPATCH_BATCH="0" must be an integer from 1 to 1000$/],
    ['DATABASE_DIRECT_URL', 'mysql://db/k', /^DATABASE_DIRECT_URL must start with postgres:\/\//, { DATABASE_URL: 'postgres://pooler/k' }],
    ['DATABASE_DIRECT_URL', 'postgres://db/k?pgbouncer=true', /^DATABASE_DIRECT_URL must reach Postgres itself: remove \?pgbouncer=true/, { DATABASE_URL: 'postgres://pooler/k' }],
    ['DATABASE_URL', 'postgres://pooler/k?pgbouncer=true', /the Postgres transport needs a session of its own.*set DATABASE_DIRECT_URL to Postgres itself, or set REDIS_URL$/],
    ['REDIS_CLUSTER_NODES', 'cache', /^REDIS_CLUSTER_NODES: "cache" needs a host and a port \(host:port\)$/],
    ['KAIROS_QUEUE_SHARDS', '0', /^KAIROS_QUEUE_SHARDS="0" must be an integer from 1 to 64$/, { REDIS_URL: 'redis://cache' }],
    ['KAIROS_QUEUE_SHARDS', '65', /^KAIROS_QUEUE_SHARDS="65" must be an integer from 1 to 64$/, { REDIS_URL: 'redis://cache' }],
    ['KAIROS_QUEUE_SHARDS', 'six', /^KAIROS_QUEUE_SHARDS="six" must be an integer from 1 to 64$/, { REDIS_URL: 'redis://cache' }],
    ['KAIROS_QUEUE_SHARDS', '4', /^KAIROS_QUEUE_SHARDS=4 shards Redis queues, and the queues live in Postgres \(REDIS_URL is unset\): unset KAIROS_QUEUE_SHARDS, or set REDIS_URL or REDIS_CLUSTER_NODES$/, { DATABASE_URL: 'postgres://db/k' }],
    ['REDIS_CLUSTER_NODES', 'http://cache:7000', /^REDIS_CLUSTER_NODES: "http:\/\/cache:7000" must start with redis:\/\/ or rediss:\/\/$/],
    ['REDIS_CLUSTER_NODES', ',', /^REDIS_CLUSTER_NODES lists no node: write host:port,host:port$/],
    ['REDIS_CLUSTER_NODES', 'a:7000', /^REDIS_URL and REDIS_CLUSTER_NODES are both set: set only the one that describes your Redis$/, { REDIS_URL: 'redis://cache' }],
    ['REDIS_SENTINELS', 'sentinel', /^REDIS_SENTINELS: "sentinel" needs a host and a port/],
    ['REDIS_SENTINEL_NAME', 'my master', /^REDIS_SENTINEL_NAME="my master" is not valid/, { REDIS_SENTINELS: 's1:26379' }],
  ];
  it.each(refused)('refuses %s=%j, naming the variable', (name, value, message, others = {}) => {
    expect(() => loadConfig({ ...others, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...others, [name]: value })).toThrow(message);
  });

  // Variables that take any text have no wrong value.
  const READ_AS_ANY_TEXT = ['KAIROS_MIGRATIONS_DIR', 'KAIROS_HTTP_ALLOWLIST', 'KAIROS_DATA_DIR', 'OTEL_SERVICE_NAME', 'KAIROS_WORKER_VERSION'];
  it('has an accepted value for every declared variable, and a refused one for every variable that can be wrong', () => {
    const names = configVariables().map((v) => v.name);
    expect(names.filter((n) => !accepted.some(([name]) => name === n))).toEqual([]);
    expect(names.filter((n) => !READ_AS_ANY_TEXT.includes(n) && !refused.some(([name]) => name === n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('reads a bare integer duration as milliseconds, after trimming', () => {
    expect(loadConfig({ KAIROS_LEADER_TTL: ' 2500 ' }).scheduler.leaderTtlMs).toBe(2_500);
  });

  it('never echoes a database password in its errors', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://user:hunter2@db/k' })).toThrow(/^(?!.*hunter2)/);
  });
});

describe('the configuration table', () => {
  const root = fileURLToPath(new URL('../../../', import.meta.url));

  it('has a row per declared variable, as declared', () => {
    const rows = configurationTable().split('\n').slice(2);
    expect(rows).toEqual(configVariables().map((v) => `| \`${v.name}\` | ${v.shownDefault} | ${v.meaning} |`));
  });

  it('is shown where the documentation includes it when the site is built, and copied by hand nowhere', () => {
    // scripts/docs-reference.mjs writes configurationTable() to docs/.generated/configuration.md.
    const page = readFileSync(join(root, 'docs/operations/configuration.md'), 'utf8');
    expect(page).toContain('<!--@include: ../.generated/configuration.md-->');
    const header = configurationTable().split('\n')[0]!;
    const pages = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md') && !f.split(/[\\/]/).some((part) => part.startsWith('.')))
      .map((f) => join('docs', f));
    expect(pages.length).toBeGreaterThan(20);
    const copies = ['README.md', ...pages].filter((f) => readFileSync(join(root, f), 'utf8').includes(header));
    expect(copies).toEqual([]);
  });
});

describe('redactUrl', () => {
  it.each<[string, string]>([
    ['postgresql://user:secret@db:5432/kairos', 'postgresql://user:***@db:5432/kairos'],
    ['redis://:secret@cache:6379', 'redis://:***@cache:6379'],
    ['rediss://default:s3cr%40t@cache:6380/0', 'rediss://default:***@cache:6380/0'],
    ['https://user:pw@example.com', 'https://user:***@example.com/'],
    ['postgresql://user@db/kairos', 'postgresql://user@db/kairos'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    ['not a url', '(unparseable URL)'],
    ['', '(unparseable URL)'],
  ])('%s -> %s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });
});

describe('describeDatabase', () => {
  it.each<[string, Record<string, string>, string]>([
    ['the embedded server by default', {}, 'embedded postgres .kairos/pg:54329'],
    ['the embedded server in another folder and port', { KAIROS_DATA_DIR: '/tmp/k', KAIROS_EMBEDDED_PG_PORT: '6000' }, 'embedded postgres /tmp/k/pg:6000'],
    ['a URL: host, port and database, never the password', { DATABASE_URL: 'postgresql://kairos:hunter2@db.internal:6432/prod' }, 'postgres db.internal:6432/prod'],
    ['a URL without a port: 5432', { DATABASE_URL: 'postgresql://db/k' }, 'postgres db:5432/k'],
    [
      'a pooler with a direct URL',
      { DATABASE_URL: 'postgresql://pooler:6432/k', DATABASE_DIRECT_URL: 'postgresql://db/k' },
      'postgres pooler:6432/k through a transaction-mode pooler (sessions (presence locks, LISTEN) on db:5432/k)',
    ],
    [
      'a pooler alone',
      { DATABASE_URL: 'postgresql://pooler:6432/k?pgbouncer=true', REDIS_URL: 'redis://cache' },
      'postgres pooler:6432/k through a transaction-mode pooler (no DATABASE_DIRECT_URL: no session state anywhere, so leaders are replaced when their lease expires and loops poll instead of LISTEN)',
    ],
  ])('%s', (_name, env, expected) => {
    expect(describeDatabase(loadConfig(env))).toBe(expected);
  });
});
