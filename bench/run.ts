/**
 * `npm run bench`: Kairos against raw BullMQ on this machine, in one run, on each transport (Redis,
 * and BullMQ's PostgreSQL backend in the bench database), same worker concurrency; throughput and
 * the herd also against graphile-worker, a job queue on Postgres alone (see graphile.ts). Two figures each:
 *   throughput  durable runs per second: ledger insert, dispatch, BullMQ, claim, noop, fenced verdict
 *               (raw BullMQ: add, process noop, complete); also with the roles apart, the scheduler
 *               (and the producer) and the worker each a process from the build, with Node's CPU
 *               per run of each (see apart.ts; KAIROS_BENCH_CPU_PROF=<dir> profiles both)
 *   lateness    actual start minus slot, p50/p99/max, for 2,000 one-shot timers spread over 10 s
 *               (raw BullMQ: 2,000 delayed jobs, processing start minus due time), and each start's
 *               distance from its slot for 50 every-second schedules over 20 s
 *   herd        B of N pending schedules due at one instant, on Redis (see herd.ts)
 *   batch       10,000 one-shot timers created with ten POST /v1/schedules/batch calls, beside
 *               1,000 created one request at a time, and an apply of 1,000 cron schedules
 *   ledger      a run's three writes in Postgres alone (insert, claim, verdict): the database's CPU
 *               for each and the share of heap-only updates, beside a ledger without the indexes
 *               that rule heap-only updates out (see ledger.ts)
 *   retention   1,000,000 runs past retention pruned as the leader prunes them: time, Postgres CPU,
 *               the runs table's size on disk (see retention.ts)
 *   protocol    a worker's claims and verdicts through the kairos_worker functions, beside the
 *               same statements sent directly (see protocol.ts)
 *   steps       steps per second of three-step chains (noop -> noop -> noop), beside single noop
 *               runs per second, the same number of calls each, in alternating rounds
 *   wake        durable functions: 1,000 runs each sleeping 2 s (ctx.sleep) on one SDK worker of
 *               concurrency 8; the lateness of each wake (its resuming claim minus its wake instant)
 *   engines     durable throughput on a Redis Cluster and through PgBouncer, beside one Redis and
 *               Postgres itself (KAIROS_BENCH_ENGINES, see enginesScenario)
 *   shards      the herd and durable throughput on one Redis and on a 3-master Redis Cluster with
 *               KAIROS_QUEUE_SHARDS=1 and =6, and what a run costs on each master and in Postgres
 *               (commands, bytes, transactions, CPU), with the rates they project (see shards.ts)
 *   failover    the leader killed with -9 ten times under load with the roles apart, on one Redis and on a
 *               Redis Cluster behind PgBouncer: time to a new leader, missed slots, runs left (see failover.ts)
 *   fairness    noop runs of mixed priorities, and over 1,000 fairness keys, beside plain noop runs (see run-path.ts)
 *   events      1,000 events in one POST /v1/events/batch, each matching one schedule, beside 1,000 runs
 *               of one POST /v1/runs/batch (accepted, all started), and one event matched by 100
 *               schedules (its request's latency), against the API from the build (see events.ts)
 *   flow        the same events with and without a throttle and a rate limit (the event path's cost), and
 *               1,000 events gathered into 10 runs by a batch of maxSize 100, timeout 1s (see flow.ts)
 * Throughput runs in each machine shape of KAIROS_BENCH_SHAPES (`shared,production`: see inShape).
 * and the ratios Kairos/BullMQ, then Postgres/Redis. Throughput is also measured for a user's worker
 * (the SDK's KairosWorker on a queue of its own, beside a scheduler), to show it runs as fast as the
 * built-in one. Each phase gets a fresh database and Redis prefix. KAIROS_BENCH_TRANSPORTS
 * (`redis,postgres`) picks the transports; `npm run bench -- herd` (or `throughput`, `lateness`)
 * runs only the scenarios named.
 */
import { batchScenario } from './batch.js';
import { enginesScenario } from './engines.js';
import { eventsScenario } from './events.js';
import { failoverScenario } from './failover.js';
import { flowScenario } from './flow.js';
import { herdScenario } from './herd.js';
import { ledgerScenario } from './ledger.js';
import { protocolScenario } from './protocol.js';
import { retentionScenario } from './retention.js';
import { alertsScenario, fairnessScenario, limitsScenario } from './run-path.js';
import { shardsScenario } from './shards.js';
import { steadyScenarios } from './steady.js';
import { stepsScenario } from './steps.js';
import { wakeScenario } from './wake.js';

const SCENARIOS = ['throughput', 'lateness', 'batch', 'herd', 'ledger', 'retention', 'protocol', 'steps', 'wake', 'limits', 'fairness', 'alerts', 'engines', 'shards', 'failover', 'events', 'flow'];
const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !SCENARIOS.includes(a));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')} (none: all)\n`);
  process.exit(2);
}
const which = new Set(asked.length > 0 ? asked : SCENARIOS);
if (which.has('throughput') || which.has('lateness')) await steadyScenarios(which);
if (which.has('batch')) await batchScenario();
if (which.has('herd')) await herdScenario();
if (which.has('ledger')) await ledgerScenario();
if (which.has('retention')) await retentionScenario();
if (which.has('protocol')) await protocolScenario();
if (which.has('steps')) await stepsScenario();
if (which.has('wake')) await wakeScenario();
if (which.has('limits')) await limitsScenario();
if (which.has('fairness')) await fairnessScenario();
if (which.has('alerts')) await alertsScenario();
if (which.has('engines')) await enginesScenario();
if (which.has('shards')) await shardsScenario();
if (which.has('failover')) await failoverScenario();
if (which.has('events')) await eventsScenario();
if (which.has('flow')) await flowScenario();

process.exit(0);
