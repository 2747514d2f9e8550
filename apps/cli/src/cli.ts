/**
 * `kairos`: the operator's command line. It reads and repairs the ledger directly (DATABASE_URL),
 * so it works when the API is down: status, schedules, runs, explain, fsck, migrate, keys,
 * signing-secret.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@kairos/config';
import { DEFAULT_NAMESPACE, LedgerUnavailableError, assertReachable, createPool, defaultMigrationsDir, ensureDatabase, migrate, readMigrations, withConnection, type Db } from '@kairos/ledger';
import { explain } from './commands/explain.js';
import { signalCommand } from './commands/signal.js';
import { queuesCommand } from './commands/queues.js';
import { calendarsCommand } from './commands/calendars.js';
import { eventsCommand } from './commands/events.js';
import { sensorsCommand } from './commands/sensors.js';
import { subscriptionsCommand } from './commands/subscriptions.js';
import { keysCommand } from './commands/keys.js';
import { fsckCommand } from './commands/fsck.js';
import { listRuns, listSchedules } from './commands/listings.js';
import { signingSecretCommand } from './commands/signing-secret.js';
import { status } from './commands/status.js';
import { workersCommand } from './commands/workers.js';
import { applyCommand } from './commands/apply.js';
import { runsBulkCommand, terminalPrompt, type Prompt } from './commands/runs-bulk.js';
import { moveVersionCommand, versionsCommand } from './commands/versions.js';
import { applyFileJsonSchema } from '@kairos/domain/wire';
import type { Output } from './output.js';

const USAGE = `usage: kairos <command> [options]

commands:
  apply -f FILE|FOLDER... [--dry-run] [--prune] [--output json]
                                  plan and apply a source's declared calendars, schedules and
                                  sensors (YAML or JSON) through the API at KAIROS_URL with
                                  KAIROS_API_KEY; exit 0 nothing to change or applied, 2 a
                                  dry run found changes, 1 an error
  schema                          print the JSON Schema of an apply file
  signal <run id> <name> [json]   send a signal to a run waiting in ctx.waitForSignal(name),
                                  through the API at KAIROS_URL with KAIROS_API_KEY
  queues [--output json]          the namespace's queues: running/max, queued, held, rate
                                  limit, live workers, and the queued runs per priority and
                                  top fairness keys (through the API, as signal)
  queues set <name> [--max-running N|none] [--rate 100/1m|none]
                                  change a queue's limits (the ones not given stay; none
                                  lifts one); held runs the new limits leave room for start
  versions [--json]               per queue and version: live workers, active runs, runs
                                  waiting for their version (through the API, as signal);
                                  a version without active runs may stop its last worker
  runs move-version <run id> <version>|--any
                                  pin a run to another version of the code (--any: a worker
                                  of any version); a run waiting for its version starts once
                                  a live worker serves the new one
  sensors [--limit N]             list sensors (newest first): state, next evaluation,
                                  cursor, last tick (through the API, as signal)
  sensors get|ticks|pause|resume <id>
                                  one sensor; its evaluations (newest first); pause it;
                                  resume it (it is evaluated at once)
  sensors cursor <id> <json>      move its cursor (an evaluation under way commits nothing)
  sensors reset <id> [--cursor <json>] [--forget-run-keys]
                                  restart it from a cursor (default null); with
                                  --forget-run-keys, asking for old run keys makes new runs
  subscriptions [--limit N]       list subscriptions (newest first): state, url, events,
                                  filter, failing since (through the API, as signal)
  subscriptions create --url URL --events a,b [--label k=v ...] [--schedule ID ...]
                [--format json|slack] [--description TEXT] [--paused]
                                  a webhook told of the namespace's events of those types
                                  (of the schedules and labels given, else of all)
  subscriptions get|pause|resume|delete <id>
                                  one subscription; pause it; resume it (a disabled one
                                  too); delete it and its deliveries
  subscriptions test <id>         send it a ping event, delivered like any other
  subscriptions deliveries <id> [--limit N]
                                  its deliveries (newest first): event type, state,
                                  attempts, last status or error
  calendars [--limit N]           list calendars (by name): dates, holidays, how many
                                  schedules name them (through the API, as signal)
  calendars get <name>            one calendar and the dates it excludes in the next
                                  twelve months
  calendars put <name> --file FILE
  calendars put <name> [--dates 2026-12-24,2026-12-31] [--country DE [--state BY]
                [--region A]] [--description TEXT]
                                  create or replace a calendar (a calendar body in YAML
                                  or JSON, or the flags); the schedules naming it are
                                  re-planned
  calendars delete <name>         delete a calendar no schedule names
  events send NAME [JSON] [--id ID]
                                  send an event (its data any JSON, default null): it
                                  starts the schedules whose "on" it matches and resumes
                                  the runs waiting for it; with --id a repeat is deduped
                                  (through the API, as signal)
  events [list] [--name NAME] [--limit N]
                                  the newest events (of that name): the runs each
                                  started, the schedules it skipped, the waits it resumed
  events get <id>                 one event, its data and what it started
  status                          leader, sessions, outages and counts
  schedules [--status S]          list schedules (newest first)
  runs [--schedule ID] [--state S] list runs (newest first)
  runs cancel|retry [--schedule NAME] [--state S,...] [--reason CODE] [--queue Q] [--since 2h|T]
                                  cancel the active runs (retry the failed or dead ones)
                                  the filter matches: prints the count and a sample first,
                                  then asks (--yes acts without asking; required without a
                                  terminal); --dry-run only counts
  explain <run id>                a run's whole story, in order
  fsck                            check the ledger's invariants (exit 1 on a violation)
  migrate                         apply pending migrations
  keys create --scopes read,write [--namespace N] [--name X]
                                  issue an API key (printed once)
  keys list [--namespace N]       list API keys
  keys revoke <prefix>            revoke an API key
  signing-secret show [--namespace N]
                                  print the secret webhook deliveries are signed with
  signing-secret rotate [--namespace N]
                                  a new secret; the previous one keeps signing for
                                  KAIROS_SIGNING_SECRET_GRACE (default 24h)
  workers grant --queue Q [--queue Q2] [--namespace N]
                                  a database login (and Redis user) for workers of
                                  those queues that may do nothing else (printed once)
  workers credentials [--namespace N]
                                  list worker credentials
  workers revoke <role>           drop a worker credential and end its sessions

options:
  --namespace N  the namespace to work in (default "default")
  --limit N      rows to list (default 20)
  --json         print JSON instead of text

DATABASE_URL names the ledger (default postgresql://postgres@127.0.0.1:5432/kairos); apply,
signal, queues, versions, runs cancel|retry|move-version, sensors, subscriptions, calendars and
events talk to the API instead: KAIROS_URL (default http://127.0.0.1:3000) and KAIROS_API_KEY.`;

export async function runCli(argv: string[], out: Output, env: Record<string, string | undefined> = process.env, prompt: Prompt = terminalPrompt()): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      status: { type: 'string' },
      // Repeatable for `subscriptions create`; `runs` filters by one schedule, the last given.
      schedule: { type: 'string', multiple: true, default: [] },
      // A run state for `runs`; a country's state (BY) for `calendars put`.
      state: { type: 'string' },
      namespace: { type: 'string' },
      scopes: { type: 'string', default: 'read' },
      // An API key's name for `keys create`; the event name `events list` keeps.
      name: { type: 'string' },
      // The producer's id of `events send`.
      id: { type: 'string' },
      queue: { type: 'string', multiple: true, default: [] },
      file: { type: 'string', short: 'f', multiple: true, default: [] },
      'dry-run': { type: 'boolean', default: false },
      // `runs cancel|retry`: the reason code filtered on, createdAfter (an instant or 2h back), and acting without asking.
      reason: { type: 'string' },
      since: { type: 'string' },
      yes: { type: 'boolean', short: 'y', default: false },
      prune: { type: 'boolean', default: false },
      output: { type: 'string', default: 'text' },
      'max-running': { type: 'string' },
      rate: { type: 'string' },
      cursor: { type: 'string' },
      'forget-run-keys': { type: 'boolean', default: false },
      // `runs move-version`: a worker of any version may take the run.
      any: { type: 'boolean', default: false },
      url: { type: 'string' },
      events: { type: 'string' },
      label: { type: 'string', multiple: true, default: [] },
      format: { type: 'string' },
      description: { type: 'string' },
      dates: { type: 'string' },
      country: { type: 'string' },
      region: { type: 'string' },
      paused: { type: 'boolean', default: false },
      limit: { type: 'string', default: '20' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    out.line(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  // Commands that are clients of the API, or need nothing at all, never open the ledger.
  if (command === 'apply') return applyCommand(out, { files: values.file, dryRun: values['dry-run'], prune: values.prune, output: values.output }, env);
  if (command === 'runs' && (rest[0] === 'cancel' || rest[0] === 'retry')) {
    return runsBulkCommand(
      out,
      rest,
      env,
      {
        schedule: values.schedule.at(-1),
        state: values.state,
        reason: values.reason,
        queue: values.queue.at(-1),
        since: values.since,
        dryRun: values['dry-run'],
        yes: values.yes,
        json: values.json || values.output === 'json',
      },
      prompt,
    );
  }
  if (command === 'runs' && rest[0] === 'move-version') return moveVersionCommand(out, rest.slice(1), env, { any: values.any, json: values.json || values.output === 'json' });
  if (command === 'versions') return versionsCommand(out, rest, env, values.json || values.output === 'json');
  if (command === 'signal') return signalCommand(out, rest, env, values.json);
  if (command === 'sensors') return sensorsCommand(out, rest, env, { limit: limitOf(values.limit), json: values.json || values.output === 'json', cursor: values.cursor, forgetRunKeys: values['forget-run-keys'] });
  if (command === 'subscriptions') {
    return subscriptionsCommand(out, rest, env, {
      limit: limitOf(values.limit),
      json: values.json || values.output === 'json',
      url: values.url,
      events: values.events,
      labels: values.label,
      scheduleIds: values.schedule,
      format: values.format,
      description: values.description,
      paused: values.paused,
    });
  }
  if (command === 'calendars') {
    return calendarsCommand(out, rest, env, {
      limit: limitOf(values.limit),
      json: values.json || values.output === 'json',
      files: values.file,
      dates: values.dates,
      country: values.country,
      state: values.state,
      region: values.region,
      description: values.description,
    });
  }
  if (command === 'events') return eventsCommand(out, rest, env, { limit: limitOf(values.limit), json: values.json || values.output === 'json', id: values.id, name: values.name });
  if (command === 'queues') return queuesCommand(out, rest, { maxRunning: values['max-running'], rate: values.rate, json: values.json || values.output === 'json' }, env);
  if (command === 'schema') {
    out.line(JSON.stringify(applyFileJsonSchema(), null, 2));
    return 0;
  }
  const config = loadConfig(env);
  const namespace = values.namespace ?? DEFAULT_NAMESPACE;
  const limit = limitOf(values.limit);
  try {
    if (command === 'migrate') await ensureDatabase(config.databaseUrl);
    else await assertReachable(config.databaseUrl);
  } catch (error) {
    // The embedded server lives and dies with Kairos; the command line does not start one.
    if (config.embeddedPostgres && error instanceof LedgerUnavailableError) {
      throw new LedgerUnavailableError(
        `${error.message}. Without DATABASE_URL the ledger is the embedded Postgres in ${config.embeddedPostgres.dataDir}, which runs while Kairos does: start Kairos (npm start) first, or set DATABASE_URL`,
      );
    }
    throw error;
  }
  const db: Db = createPool({ connectionString: config.databaseUrl, max: 2, applicationName: 'kairos-cli' });
  try {
    switch (command) {
      case 'status':
        return await status(db, config, out, values.json);
      case 'schedules':
        return await listSchedules(db, out, { namespace, status: values.status, limit, json: values.json });
      case 'runs':
        return await listRuns(db, out, { namespace, scheduleId: values.schedule.at(-1), state: values.state, limit, json: values.json });
      case 'explain':
        if (rest[0] === undefined) throw new ConfigError('explain needs a run id: kairos explain <run id>');
        return await explain(db, namespace, rest[0], out, values.json);
      case 'keys':
        return await keysCommand(db, out, rest, { namespace: values.namespace, scopes: values.scopes, name: values.name, json: values.json });
      case 'signing-secret':
        return await signingSecretCommand(db, config, out, rest, { namespace, json: values.json });
      case 'workers':
        return await workersCommand(db, config, out, rest, { namespace, queues: values.queue, json: values.json });
      case 'fsck':
        return await fsckCommand(db, out, values.json);
      case 'migrate': {
        const result = await withConnection(db, (client) => migrate(client, readMigrations(config.migrationsDir ?? defaultMigrationsDir())));
        out.line(result.applied.length === 0 ? 'the ledger is up to date' : `applied ${result.applied.join(', ')}`);
        return 0;
      }
      default:
        out.line(`kairos: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } finally {
    await db.end();
  }
}

/** --limit: rows to list, 1 to 500. */
function limitOf(text: string): number {
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new ConfigError('--limit must be an integer from 1 to 500');
  return limit;
}
