/**
 * Starting a Kairos process: validate configuration, start the embedded Postgres when
 * DATABASE_URL is unset, open the ledger (creating the database and applying migrations), open
 * the transport (Redis, or the Postgres backend's schema), then start Nest with the requested
 * roles. Anything that stops start-up prints one line saying what is wrong and how to fix it, and
 * the process exits 1; a transport that does not answer yet only delays the consumers.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Logger, Module, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ConfigError, describeDatabase, loadConfig, type KairosConfig, type Role } from '@kairos/config';
import { DEFAULT_NAMESPACE, DatabaseClock, NamespaceRepository, openLedger, startEmbeddedPostgres, type EmbeddedPostgres } from '@kairos/ledger';
import { describeShards, describeTransport, openTransport, type Transport } from '@kairos/queue';
import { JsonLogger, accessLog, createLogger, logsJson, requestSpans, startTracing, stopTracing } from '@kairos/telemetry';
import { CoreModule } from './core.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';

export interface KairosProcess {
  /** Names the process in logs and in Postgres' application_name. */
  name: string;
  /** Roles this entry point runs unless KAIROS_ROLES says otherwise. */
  defaultRoles: Role[];
  /** The Nest module of each role this entry point can host. */
  modules: Partial<Record<Role, Type | DynamicModule>>;
}

export interface StartedKairos {
  app: NestExpressApplication;
  config: KairosConfig;
  url: string;
  /** The process's transport, with the number of shards it chose. */
  transport: Transport;
}

/** Starts the process and returns once it serves requests. `env` is process.env unless a test passes its own. */
export async function startKairos(spec: KairosProcess, env: Record<string, string | undefined> = process.env): Promise<StartedKairos> {
  const config = loadConfig(env, spec.defaultRoles);
  for (const role of config.roles) {
    if (!spec.modules[role]) throw new ConfigError(`KAIROS_ROLES: the ${spec.name} entry point cannot run the ${role} role`);
  }
  const kairosLogger = createLogger(config);
  Logger.overrideLogger(kairosLogger);
  const logger = new Logger('Kairos');
  const tracing = startTracing(config, spec.name);
  const embedded = config.embeddedPostgres ? await startEmbedded(config.embeddedPostgres, logger) : null;
  let opened: Awaited<ReturnType<typeof openLedger>>;
  try {
    opened = await openLedger({
      databaseUrl: config.databaseUrl,
      directUrl: config.databaseDirectUrl,
      poolSize: config.databasePoolSize,
      applicationName: `kairos-${spec.name}`,
      migrationsDir: config.migrationsDir ?? undefined,
    });
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  const { db, migrations } = opened;
  if (migrations.applied.length > 0) logger.log(`applied migrations ${migrations.applied.join(', ')}`);
  const clock = new DatabaseClock(db);
  watchClock(clock, logger);
  await clock.start();
  let transport: Awaited<ReturnType<typeof openTransport>>;
  try {
    transport = await openTransport(config.transport, config.queuePrefix);
  } catch (error) {
    clock.stop();
    await db.end();
    await embedded?.stop();
    throw error;
  }
  // A transport that does not answer yet does not stop the start: the process serves, reports it on
  // /health/ready, and its consumers start once it answers.
  await transport.ping().catch((error: Error) => logger.warn(`${error.message}; serving without it until it answers (see /health/ready)`));
  if (transport.shardsWarning) logger.warn(transport.shardsWarning);
  const namespace = await new NamespaceRepository().getByName(db, DEFAULT_NAMESPACE);

  @Module({})
  class KairosAppModule {}
  const root: DynamicModule = {
    module: KairosAppModule,
    imports: [
      CoreModule.forRoot({ config, db, clock, transport, embedded, defaultNamespaceId: namespace!.id }),
      HealthModule,
      MetricsModule,
      ...config.roles.map((role) => spec.modules[role]!),
    ],
  };
  const app = await NestFactory.create<NestExpressApplication>(root, {
    bodyParser: false,
    logger: kairosLogger,
  });
  if (config.roles.includes('api')) {
    app.use(accessLog());
    if (tracing) app.use(requestSpans());
  }
  // Payloads may be 256 KiB of JSON; the body limit sits above that so the API can answer with
  // its own PAYLOAD_TOO_LARGE naming the field instead of a bare 413.
  app.useBodyParser('json', { limit: '1mb' });
  // Nothing gains from knowing the server is Express.
  app.disable('x-powered-by');
  await app.listen(config.api.port, config.api.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const host = config.api.host === '0.0.0.0' || config.api.host === '::' ? 'localhost' : config.api.host;
  const url = `http://${host}:${address.port}`;
  logger.log(`roles ${config.roles.join(', ')} running on ${describeDatabase(config)} with the ${transport.description} transport, ${describeShards(transport)}`);
  return { app, config, url, transport };
}

/** How far a host's clock may be from the database's before an operator hears of it. */
const CLOCK_WARNING_MS = 1_000;

/**
 * Warns when this host's clock strays more than a second from the database's, and says when it is
 * back: Kairos keeps time by the database, but the host's logs, a user's handlers and other
 * programs on it do not.
 */
function watchClock(clock: DatabaseClock, logger: Logger): void {
  let astray = false;
  clock.onReading(({ offsetMs, uncertaintyMs }) => {
    const nowAstray = Math.abs(offsetMs) > CLOCK_WARNING_MS;
    if (nowAstray && !astray) {
      logger.warn(
        `this host's clock is ${formatOffset(-offsetMs)} the database's (±${Math.ceil(uncertaintyMs)} ms); Kairos keeps time by the database, but fix the host's time sync (NTP)`,
      );
    } else if (!nowAstray && astray) logger.log(`this host's clock is within ${CLOCK_WARNING_MS} ms of the database's again`);
    astray = nowAstray;
  });
}

function formatOffset(aheadMs: number): string {
  return `${(Math.abs(aheadMs) / 1_000).toFixed(1)} s ${aheadMs >= 0 ? 'ahead of' : 'behind'}`;
}

/** Starts the embedded Postgres, saying how long it took: a first start creates its data folder. */
async function startEmbedded(options: NonNullable<KairosConfig['embeddedPostgres']>, logger: Logger): Promise<EmbeddedPostgres> {
  const started = Date.now();
  const server = await startEmbeddedPostgres({ ...options, note: (message) => logger.log(message) });
  const how = server.initialised ? `created ${options.dataDir} and started` : 'started';
  logger.log(`embedded Postgres ${how} in ${Date.now() - started} ms on 127.0.0.1:${options.port} (set DATABASE_URL to use your own)`);
  return server;
}

/**
 * The start-up banner: where to find the process. Under JSON logging it is one log line like any
 * other, its URLs as fields; on a terminal it is a small table.
 */
function announce(name: string, config: KairosConfig, url: string, transport: Transport): void {
  const urls: Record<string, string> = {};
  if (config.roles.includes('api')) {
    Object.assign(urls, { dashboard: `${url}/ui`, rest: `${url}/v1/schedules`, graphql: `${url}/graphql`, openapi: `${url}/docs`, bullBoard: `${url}/admin/queues` });
  }
  Object.assign(urls, { health: `${url}/health/ready`, metrics: `${url}/metrics`, database: describeDatabase(config), transport: describeTransport(config.transport), shards: describeShards(transport) });
  if (logsJson(config)) {
    // Printed at every LOG_LEVEL, like the table: supervisors and tests wait for it.
    new JsonLogger('log', config.roles.join(',')).log({ msg: `Kairos ${name} is up`, ...urls }, 'Kairos');
    return;
  }
  const labels: Record<string, string> = {
    dashboard: 'Dashboard', rest: 'REST', graphql: 'GraphQL', openapi: 'OpenAPI', bullBoard: 'Bull Board', health: 'Health', metrics: 'Metrics',
    database: 'Database', transport: 'Transport', shards: 'Shards',
  };
  const lines = [`Kairos ${name} is up.`, ...Object.entries(urls).map(([key, value]) => `  ${labels[key]!.padEnd(11)} ${value}`)];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The entry point of a process: start, print where to find it, exit 1 with a clear line on failure. */
export async function runKairos(spec: KairosProcess): Promise<void> {
  try {
    const { app, config, url, transport } = await startKairos(spec);
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        process.stderr.write(`kairos: ${signal} again, exiting without finishing the shutdown\n`);
        process.exit(1);
      }
      stopping = true;
      new Logger('Kairos').log(`${signal}: shutting down`);
      // The roles drain in their shutdown hooks; this only bounds how long that may take.
      setTimeout(() => process.exit(1), config.shutdownGraceMs + 5_000).unref();
      // The spans of the shutdown itself are exported before the process exits.
      app
        .close()
        .then(() => stopTracing())
        .then(
          () => process.exit(0),
          (error: Error) => {
            process.stderr.write(`kairos: shutdown failed: ${error.message}\n`);
            process.exit(1);
          },
        );
    };
    // Before the banner: whoever waits for it may stop the process as soon as it is printed.
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    announce(spec.name, config, url, transport);
  } catch (error) {
    process.stderr.write(`kairos: ${(error as Error).message}\n`);
    if (process.env.LOG_LEVEL === 'debug') process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    process.exit(1);
  }
}
