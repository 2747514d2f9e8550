/**
 * Configuration, read once from the environment and validated at start-up. A bad value stops the
 * process with a message naming the variable; nothing downstream re-reads process.env.
 *
 * CONFIGURATION declares every variable once: loadConfig reads it into a KairosConfig of the same
 * shape, and the documentation's configuration table is written from it (config-table.ts). The
 * readers are in variables.ts, the ledger's and the transport's variables in connections.ts, and
 * the rest of what a worker reads in worker-config.ts.
 */
import { databaseDirectUrl, embeddedPostgres, ledgerUrl, transport } from './connections.js';
import {
  ConfigError,
  Derived,
  LOOP_MIN,
  ROLES,
  SECOND,
  Variable,
  duration,
  flag,
  integer,
  oneOf,
  optionalText,
  optionalUrl,
  raw,
  readDeclaration,
  text,
  variable,
  type Env,
  type Read,
  type Role,
} from './variables.js';
import { queuePrefix, reaperSkew, shutdownGrace, workerArea } from './worker-config.js';

const roles = variable<readonly Role[], Role[]>(
  { name: 'KAIROS_ROLES', default: (context) => context.defaultRoles, shown: 'per entry point', meaning: '`api,scheduler,worker` for `npm start`' },
  (value, fallback) => {
    if (value === undefined) return [...fallback()];
    const parsed = value
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r.length > 0);
    for (const role of parsed) {
      if (!(ROLES as readonly string[]).includes(role)) {
        throw new ConfigError(`KAIROS_ROLES: unknown role "${role}"; use a comma-separated list of ${ROLES.join(', ')}`);
      }
    }
    return [...new Set(parsed)] as Role[];
  },
);

const host = text({
  name: 'HOST',
  default: '127.0.0.1',
  pattern: /^[A-Za-z0-9.:-]+$/,
  meaning: 'address the HTTP listener binds (every role serves `/health`); `0.0.0.0` to be reachable from other machines',
});

const otlpTracesEndpoint = optionalUrl({
  name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  default: null,
  shown: 'unset',
  protocols: ['http:', 'https:'],
  meaning: 'the traces URL itself, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
});
const otlpEndpoint = optionalUrl({
  name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  default: null,
  shown: 'unset',
  protocols: ['http:', 'https:'],
  meaning: 'OTLP/HTTP collector (e.g. `http://collector:4318`): spans go to its `/v1/traces`. Unset (and no traces endpoint): nothing is traced or exported',
});
/**
 * The OTLP/HTTP traces endpoint, as the OpenTelemetry specification derives it: the signal's own
 * variable is used as it is, the general one gets `/v1/traces` appended.
 */
const tracesUrl = new Derived<string | null>([otlpEndpoint, otlpTracesEndpoint], (context) => {
  const own = otlpTracesEndpoint.read(context);
  if (own !== null) return own;
  const base = otlpEndpoint.read(context);
  return base === null ? null : `${base.replace(/\/+$/, '')}/v1/traces`;
});

/** Requests per second per key; a dashboard page load is a dozen, a busy script rarely needs more. */
export const DEFAULT_RATE_LIMIT = 100;

/** Every variable, in the shape of KairosConfig. Adding a variable is adding one entry here. */
export const CONFIGURATION = {
  roles,
  databaseUrl: ledgerUrl,
  databaseDirectUrl,
  embeddedPostgres,
  databasePoolSize: integer({
    name: 'DATABASE_POOL_SIZE',
    default: 10,
    min: 1,
    max: 200,
    meaning: 'Postgres connections per process; a worker opens up to 3 more for its batched claims and verdicts',
  }),
  migrationsDir: optionalText({
    name: 'KAIROS_MIGRATIONS_DIR',
    default: null,
    shown: 'the `prisma/migrations` this build ships with',
    meaning: 'where the SQL migrations are read from',
  }),
  transport,
  queuePrefix,
  logLevel: oneOf({
    name: 'LOG_LEVEL',
    default: 'log',
    allowed: ['error', 'warn', 'log', 'debug', 'verbose'] as const,
    meaning: '`error`, `warn`, `log`, `debug` or `verbose`',
  }),
  logFormat: oneOf({
    name: 'LOG_FORMAT',
    default: 'auto',
    allowed: ['auto', 'json', 'pretty', 'text'] as const,
    meaning:
      '`json`: one JSON object per line (pino): `level`, `time`, `msg`, `role`, `context` and, where there is one, `runId`, `scheduleId`, `namespace`, `epoch`, `requestId`, with an access-log line per API request (`method`, `path`, `status`, `durationMs`); never payloads, results or secrets. `pretty` (or `text`): readable lines for a terminal. `auto`: `json` unless stdout is a terminal',
  }).map((format) => (format === 'text' ? 'pretty' : format)),
  shutdownGraceMs: shutdownGrace,
  api: {
    host,
    port: integer({ name: 'PORT', default: 3000, min: 0, max: 65535, meaning: 'port of the HTTP listener; `0` picks a free one' }),
    auth: oneOf({
      name: 'KAIROS_AUTH',
      // Anonymous callers get every scope, which is only safe when nobody else can connect.
      default: (context) => (isLoopbackHost(host.read(context)) ? 'optional' : 'required'),
      shown: '`optional` on a loopback `HOST`, else `required`',
      allowed: ['optional', 'required'] as const,
      meaning: '`required`: every API request needs a key; `optional`: a request without one acts in `default` with every scope',
    }),
    sessionTtlMs: duration({
      name: 'KAIROS_SESSION_TTL',
      default: '12h',
      min: SECOND,
      meaning: 'how long a browser session opened by `POST /auth/login` lasts',
    }),
    rateLimit: integer({
      name: 'KAIROS_RATE_LIMIT',
      default: DEFAULT_RATE_LIMIT,
      min: 0,
      max: 1_000_000,
      meaning:
        'requests per second per API key (per address without one), shared by every API replica through Redis (on the Postgres transport, counted in each API process); `0` turns it off',
    }),
    graphqlIntrospection: flag({
      name: 'KAIROS_GRAPHQL_INTROSPECTION',
      default: (context) => raw(context.env, 'NODE_ENV') !== 'production',
      shown: '`true`, `false` when `NODE_ENV=production`',
      meaning: 'whether GraphQL answers introspection queries',
    }),
    signingSecretGraceMs: duration({
      name: 'KAIROS_SIGNING_SECRET_GRACE',
      default: '24h',
      meaning: 'how long a rotated-away signing secret still signs deliveries beside the new one',
    }),
  },
  scheduler: {
    leaderTtlMs: duration({
      name: 'KAIROS_LEADER_TTL',
      default: '10s',
      min: SECOND,
      meaning:
        'scheduler lease and partition leases; renewed every third of it. A leader or partition owner whose process dies is replaced within about a second regardless; the TTL bounds only a frozen or partitioned one',
    }),
    tickMaxIdleMs: duration({
      name: 'KAIROS_TICK_MAX_IDLE',
      default: '1s',
      min: LOOP_MIN,
      meaning: 'longest tick sleep (new schedules also wake it)',
    }),
    tickBatchSize: integer({
      name: 'KAIROS_TICK_BATCH',
      default: 2_000,
      min: 1,
      max: 10_000,
      meaning: 'schedules one tick transaction claims and writes; the next batch is written while the last one is handed to BullMQ',
    }),
    lookaheadMs: duration({
      name: 'KAIROS_LOOKAHEAD',
      default: '15s',
      meaning: 'slots this far ahead are made into runs early and handed to BullMQ as delayed jobs (see Lookahead); `0s` makes each run at its instant',
    }),
    relayIntervalMs: duration({
      name: 'KAIROS_RELAY_INTERVAL',
      default: '1s',
      min: LOOP_MIN,
      meaning: 'how often the leader hands undispatched runs to Redis and publishes outbox events once it is caught up',
    }),
    reconcileIntervalMs: duration({
      name: 'KAIROS_RECONCILE_INTERVAL',
      default: '5s',
      min: LOOP_MIN,
      meaning: 'how often the leader checks overdue queued runs against Redis',
    }),
    reconcileGraceMs: duration({
      name: 'KAIROS_RECONCILE_GRACE',
      default: '10s',
      meaning: 'a queued run this overdue is checked against Redis and re-enqueued when Redis lost it',
    }),
    reaperIntervalMs: duration({
      name: 'KAIROS_REAPER_INTERVAL',
      default: '2s',
      min: LOOP_MIN,
      meaning: 'how often the leader looks for runs whose lease expired',
    }),
    reaperSkewMs: reaperSkew,
    reaperBackoffMs: duration({ name: 'KAIROS_REAPER_BACKOFF', default: '5s', meaning: 'the delay before a reaped run is due again' }),
    crashBudget: integer({
      name: 'KAIROS_CRASH_BUDGET',
      default: 3,
      min: 1,
      max: 100,
      meaning: 'executors that may die holding a run before it is `POISONED`',
    }),
  },
  alerts: {
    publicUrl: optionalUrl({
      name: 'KAIROS_PUBLIC_URL',
      default: null,
      shown: 'unset',
      protocols: ['http:', 'https:'],
      meaning: "the dashboard's address as people reach it (e.g. `https://kairos.example.com`); subscription deliveries link to runs and schedules under it, and carry no link while it is unset",
    }),
    retryWindowMs: duration({
      name: 'KAIROS_SUBSCRIPTION_RETRY_WINDOW',
      default: '24h',
      min: SECOND,
      meaning: 'how long a subscription delivery is retried (with backoff) before the subscription is disabled and `subscription.disabled` goes to the namespace\'s other subscriptions',
    }),
    deliveryTimeoutMs: duration({
      name: 'KAIROS_SUBSCRIPTION_TIMEOUT',
      default: '10s',
      min: 100,
      meaning: 'how long one subscription delivery may take before it counts as failed and is retried',
    }),
  },
  retention: {
    retentionMs: duration({
      name: 'KAIROS_RETENTION',
      default: '30d',
      min: SECOND,
      meaning:
        'finished runs (with their run events and ticks), run-less ticks, published outbox rows, old sessions and outages are pruned past this age',
    }),
    deadLetterRetentionMs: duration({
      name: 'KAIROS_DEAD_LETTER_RETENTION',
      default: '90d',
      min: SECOND,
      meaning: 'how long a dead letter nobody republished is kept (a republished one follows `KAIROS_RETENTION`)',
    }),
    eventRetentionMs: duration({
      name: 'KAIROS_EVENT_RETENTION',
      default: '7d',
      min: SECOND,
      meaning:
        'how long a received event is kept (`GET /v1/events`), and so the window in which sending its `id` again is answered with the first event (`deduped`) instead of starting its runs again; older events are pruned',
    }),
    // Small, so each transaction is short.
    batchSize: integer({ name: 'KAIROS_RETENTION_BATCH', default: 500, min: 1, max: 10_000, meaning: 'rows per pruning statement' }),
    intervalMs: duration({
      name: 'KAIROS_RETENTION_INTERVAL',
      default: '1m',
      min: LOOP_MIN,
      meaning: 'how often the leader looks for something to prune once it is caught up',
    }),
  },
  tracing: {
    tracesUrl,
    serviceName: optionalText({
      name: 'OTEL_SERVICE_NAME',
      default: null,
      shown: '`kairos-<process>`',
      meaning: 'the traces\' `service.name`; by default `kairos-api`, `kairos-scheduler`, `kairos-worker` or `kairos-all-in-one`',
    }),
  },
  worker: workerArea,
};

export type KairosConfig = Read<typeof CONFIGURATION>;

/** Every declared variable, in declaration order. */
export function configVariables(declaration: object = CONFIGURATION): Variable<unknown>[] {
  return Object.values(declaration).flatMap((entry: object) =>
    entry instanceof Variable ? [entry] : entry instanceof Derived ? [...entry.variables] : configVariables(entry),
  );
}

export function loadConfig(env: Env = process.env, defaultRoles: Role[] = [...ROLES]): KairosConfig {
  return readDeclaration(CONFIGURATION, { env, defaultRoles }) as KairosConfig;
}

/** Whether a listener on `host` is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
