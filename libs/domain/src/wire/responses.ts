/** The REST API's response shapes. The API's views are typed as their outputs, so a view cannot drift from what the document says. */
import { z } from 'zod';
import { API_SCOPES } from '../api-keys.js';
import { QUEUE_NAME_PATTERN } from '../handlers.js';
import { MAX_PRIORITY, MIN_PRIORITY } from '../priority.js';
import { TICK_PARTITIONS } from '../partitions.js';
import { CalendarRuleView } from './calendars.js';
import { EventTriggerView, EventView, FlowControlView } from './events.js';
import { component, page } from './registry.js';
import {
  AttemptOutcome,
  CatchupPolicy,
  Concurrency,
  Fairness,
  DstPolicy,
  Duration,
  ErrorCode,
  HandlerName,
  Instant,
  JsonValue,
  Labels,
  OverlapPolicy,
  ReasonCodeSchema,
  RetryPolicy,
  RunEventKind,
  RunOrigin,
  RunState,
  ScheduleStatus,
  CheckpointKind,
  CheckpointState,
  Step,
  StepState,
  StepWhen,
  Target,
  TickOrigin,
  TickOutcome,
} from './shared.js';

const count = () => z.int().min(0);
/** A JSON object whose fields depend on what produced it (an error, an HTTP response). */
const detail = () => z.record(z.string(), z.unknown());

export const ErrorBody = component(
  'Error',
  z.strictObject({
    code: ErrorCode,
    message: z.string().describe('What was wrong and what to do about it.'),
    field: z.string().nullable().describe('The offending field as a dotted path (`target.name`), or null.'),
  }),
  'Every error the REST API answers with.',
);

export const Schedule = component(
  'Schedule',
  z.strictObject({
    id: z.uuid(),
    name: z.string(),
    cron: z.string().nullable(),
    every: Duration.nullable(),
    at: Instant.nullable(),
    on: EventTriggerView.nullable().describe('The events that start it; null for a schedule of the clock.'),
    ...FlowControlView,
    timezone: z.string(),
    dst: DstPolicy,
    catchup: CatchupPolicy,
    overlap: OverlapPolicy,
    target: Target.nullable().describe('What each run executes; null when it runs steps.'),
    steps: z.array(Step).nullable().describe('The graph of steps each run executes; null when it runs one target.'),
    payload: JsonValue,
    retry: RetryPolicy,
    timeout: Duration,
    concurrency: Concurrency.nullable().describe("Each run's concurrency key (a template over the payload) and limit; null: none."),
    priority: z.int().min(MIN_PRIORITY).max(MAX_PRIORITY).describe("Each run's priority: 1 starts first, 5 last."),
    fairness: Fairness.nullable().describe("Each run's fairness key (a template over the payload) and weight; null: none."),
    startAt: Instant.nullable(),
    endAt: Instant.nullable(),
    maxRuns: z.int().min(1).nullable(),
    jitter: Duration,
    expect: z
      .strictObject({ succeededWithin: Duration })
      .nullable()
      .describe("What each slot's run must do: succeed within `succeededWithin` after the slot; null: nothing is expected."),
    calendar: CalendarRuleView.nullable().describe('The local dates it does not fire on; null: every date.'),
    lateSince: Instant.nullable().describe('The first late slot of a lateness under way (a slot whose run did not succeed in time); null while the schedule keeps its deadlines.'),
    paused: z.boolean().describe('Whether status is paused.'),
    idempotencyKey: z.string().nullable(),
    labels: Labels,
    status: ScheduleStatus,
    nextFireAt: Instant.nullable().describe('The next slot; null once the schedule has nothing left to fire.'),
    lastFireAt: Instant.nullable(),
    fireCount: count(),
    createdAt: Instant,
    updatedAt: Instant,
    deduped: z.boolean().describe('True when a create with a repeated idempotencyKey returned this existing schedule.'),
  }),
  'A schedule: its definition with defaults filled in (one of cron, every or at is set), and its cursor.',
);
export const SchedulePage = component('SchedulePage', page(Schedule, 'A page of schedules, newest first.'));

export const Tick = component(
  'Tick',
  z.strictObject({
    scheduledFor: Instant.describe('The slot.'),
    outcome: TickOutcome,
    reasonCode: ReasonCodeSchema,
    reasonText: z.string().nullable(),
    runId: z.uuid().nullable().describe('The run the slot created, if any.'),
    origin: TickOrigin,
    createdAt: Instant,
  }),
  'One evaluated slot of a schedule and what came of it.',
);
export const TickPage = component('TickPage', page(Tick, 'A page of ticks, newest slot first.'));

export const RunStep = component(
  'RunStep',
  z.strictObject({
    name: z.string(),
    dependsOn: z.array(z.string()),
    when: StepWhen,
    state: StepState,
    attempt: count().describe('Attempts started so far.'),
    maxAttempts: z.int().min(1),
    result: JsonValue.describe('What the step returned, once succeeded: the `inputs` of the steps after it.'),
    error: detail().nullable().describe('The last failure, if any.'),
    reasonCode: ReasonCodeSchema.nullable().describe('Set once the step is terminal (UPSTREAM_FAILED for a skipped step).'),
    reasonText: z.string().nullable(),
    startedAt: Instant.nullable(),
    finishedAt: Instant.nullable(),
    runId: z.uuid().describe("The step's own run (GET /v1/runs/{id}/events tells its story)."),
  }),
  'One step of a multi-step run, frozen when the run was created, and where it stands.',
);

export const Checkpoint = component(
  'Checkpoint',
  z.strictObject({
    name: z.string().describe('The step\'s name (ctx.step), `sleep#<n>` for the n-th ctx.sleep, `signal:<name>` for ctx.waitForSignal.'),
    kind: CheckpointKind,
    state: CheckpointState,
    result: JsonValue.describe("A step's stored result, or the signal's body."),
    startedAt: Instant,
    finishedAt: Instant.nullable(),
    wakeAt: Instant.nullable().describe("A sleep's wake instant, or a wait's timeout."),
  }),
  "One checkpoint of a run's durable function.",
);

export const SignalResult = component(
  'SignalResult',
  z.strictObject({ delivered: z.boolean().describe('True when the run was waiting for this signal and resumes now; false when it is kept until the run asks for it.') }),
  'A signal sent to a run.',
);

const runFields = z.strictObject({
  id: z.uuid(),
  scheduleId: z.uuid().nullable().describe('Null for an ad-hoc run.'),
  origin: RunOrigin,
  sourceRunId: z.uuid().nullable().describe('The run a retry or republish re-runs.'),
  scheduledFor: Instant.describe('The slot (for an ad-hoc run: when it was due).'),
  availableAt: Instant.nullable().describe('When the run may start; null while it waits behind an earlier run of its schedule.'),
  deferReason: z
    .string()
    .nullable()
    .describe(
      'Why the run has not started: while a limit holds it back, CONCURRENCY_LIMIT, QUEUE_LIMIT or QUEUE_RATE_LIMIT; while it waits for the turn of its fairness key to enter its queue, FAIR_SHARE; while no live worker runs the version it is pinned to, VERSION_UNAVAILABLE; otherwise why availableAt is later than the slot.',
    ),
  state: RunState,
  attempt: count().describe('Attempts started so far.'),
  maxAttempts: z.int().min(1),
  target: Target.nullable().describe('What the run executes; null for a multi-step run.'),
  steps: z.array(RunStep).nullable().describe('The steps of a multi-step run, in declaration order; null for a single-target run.'),
  parentRunId: z.uuid().nullable().describe("For a step's own run: the multi-step run it belongs to."),
  stepName: z.string().nullable().describe("For a step's own run: its step's name."),
  concurrency: Concurrency.nullable().describe('The concurrency key the run holds while running (resolved from its payload) and its limit; null: none.'),
  priority: z.int().min(MIN_PRIORITY).max(MAX_PRIORITY).describe('1 starts first, 5 last: among the due runs of its queue, the next start goes to the best priority.'),
  fairnessKey: z.string().nullable().describe('The fairness key whose turns the run takes (resolved from its payload); null: the one key runs without a key share.'),
  sensorId: z.uuid().nullable().describe('For a run of a sensor (origin sensor): the sensor; also set on the runs that evaluate it.'),
  eventId: z.string().nullable().describe('For a run an event started (origin event): the event; its payload carries it under `event`.'),
  runKey: z.string().nullable().describe('For a run a sensor asked for: its run key, unique per sensor.'),
  checkpoints: z.array(Checkpoint).describe("The checkpoints of the run's durable function (ctx.step, ctx.sleep, ctx.waitForSignal), in the order they began."),
  retry: RetryPolicy,
  payload: JsonValue,
  result: JsonValue.describe('What the target returned, once succeeded.'),
  error: detail().nullable().describe('The last failure, if any.'),
  reasonCode: ReasonCodeSchema.nullable().describe('Set once the run is terminal.'),
  reasonText: z.string().nullable(),
  crashCount: count().describe('Executors that died holding the run.'),
  cancelRequestedAt: Instant.nullable(),
  idempotencyKey: z.string().nullable(),
  createdAt: Instant,
  startedAt: Instant.nullable(),
  finishedAt: Instant.nullable(),
  leaseEpoch: count().describe('Rises with every claim and every reap; verdicts are fenced by it.'),
  progress: JsonValue.describe("The last progress its handler reported (ctx.progress, any JSON up to 64 KiB); null when it reported none."),
  version: z
    .string()
    .nullable()
    .describe(
      "The version of the worker that claimed the run (KairosWorker's `version`); null before its first claim, and after a move to any version. Each claim sets it until the run stores a checkpoint; from then on the run is pinned to it: later attempts and resumes are claimed only by workers of that version, or by workers started with upgrade \"auto\". POST /v1/runs/{id}/version moves it.",
    ),
});

export const Run = component('Run', runFields, 'One execution of a target, with its retries.');
export const RunCreated = component(
  'RunCreated',
  runFields.extend({ deduped: z.boolean().describe('True when a repeated idempotencyKey returned this existing run.') }),
  'The run POST /v1/runs created (or found by idempotency key).',
);

/** An item of a batch request that was refused: what its single route would have answered. */
export const BatchRefusal = component(
  'BatchRefusal',
  z.strictObject({ error: ErrorBody }),
  "An item of a batch that was refused, with the error (code, message, field) its single route answers; nothing of it was stored.",
);

export const RunBatchResult = component(
  'RunBatchResult',
  z.strictObject({ items: z.array(z.union([RunCreated, BatchRefusal])).describe('One answer per item, in the order of the request.') }),
  'What POST /v1/runs/batch did with each item: the run it created (or found by idempotency key, `deduped: true`), or its refusal.',
);

export const EventBatchResult = component(
  'EventBatchResult',
  z.strictObject({ items: z.array(z.union([EventView, BatchRefusal])).describe('One answer per item, in the order of the request.') }),
  'What POST /v1/events/batch did with each item: the event it stored (or found by id, `deduped: true`), with the runs it started, or its refusal.',
);

export const ScheduleBatchResult = component(
  'ScheduleBatchResult',
  z.strictObject({ items: z.array(z.union([Schedule, BatchRefusal])).describe('One answer per item, in the order of the request.') }),
  'What POST /v1/schedules/batch did with each item: the schedule it created (or found by idempotency key, `deduped: true`), or its refusal.',
);

export const Attempt = component(
  'Attempt',
  z.strictObject({
    attempt: z.int().min(1),
    leaseEpoch: z.int(),
    worker: z.string(),
    startedAt: Instant,
    finishedAt: Instant.nullable(),
    outcome: AttemptOutcome.nullable().describe('Null while the attempt is executing.'),
    reasonCode: ReasonCodeSchema.nullable(),
    error: detail().nullable(),
    response: detail().nullable().describe('What an HTTP target answered.'),
  }),
  'One execution attempt: a claim at a new lease epoch and the event that ended it.',
);
export const RunDetail = component(
  'RunDetail',
  runFields.extend({ attempts: z.array(Attempt).describe('Each execution attempt, read from the run events.') }),
  'A run as GET /v1/runs/{id} returns it.',
);
export const RunPage = component('RunPage', page(Run, 'A page of runs, newest first.'));

export const BackfillResult = component(
  'BackfillResult',
  z.strictObject({
    slots: count().describe('Slots of the schedule inside the range.'),
    created: count().describe('Runs created now.'),
    alreadyTicked: count().describe('Slots that already had a tick (fired, skipped or backfilled before) and were left alone.'),
    runs: z.array(Run),
  }),
  'What a backfill created. Repeating a backfill over the same range creates nothing new.',
);

export const Preview = component(
  'Preview',
  z.strictObject({
    fireTimes: z.array(Instant),
    excludedDates: z
      .array(z.string().meta({ format: 'date' }))
      .optional()
      .describe("Present when the schedule has a calendar: the local dates (YYYY-MM-DD, in the schedule's zone) up to the last fire listed that it excludes and on which a slot would have fired (onExcluded skip)."),
    dst: DstPolicy,
  }),
  'The next fire instants, in UTC, the dates the calendar kept clear, and the DST policy they were computed with.',
);

export const RunEvent = component(
  'RunEvent',
  z.strictObject({
    id: z.int().describe('Increases with every event written.'),
    at: Instant,
    kind: RunEventKind,
    fromState: RunState.nullable(),
    toState: RunState.nullable(),
    leaseEpoch: z.int().nullable(),
    actor: z.string().describe('Who caused the transition: api, scheduler, a worker id, ...'),
    reasonCode: ReasonCodeSchema.nullable(),
    detail: detail().describe('Event-specific detail (errors, HTTP responses, attempt numbers).'),
  }),
  'One transition of a run, appended in the same transaction as the transition.',
);
export const RunEventList = component('RunEventList', z.strictObject({ items: z.array(RunEvent) }), "A run's whole event history, oldest first (not paginated).");

/** How far a process's host clock was from the database's at its last heartbeat. */
const ClockOffset = z
  .number()
  .nullable()
  .describe(
    "The database's clock minus the process host's, in ms, at its last heartbeat (positive: the host's clock is behind); null before it measured. Kairos decides every instant by the database's clock.",
  );

export const Worker = component(
  'Worker',
  z.strictObject({
    id: z.string().describe('The worker process, as it signs its leases.'),
    queue: z.string().regex(QUEUE_NAME_PATTERN),
    handlers: z.array(HandlerName).describe('The handlers it registered, sorted.'),
    version: z.string(),
    startedAt: Instant,
    lastSeenAt: Instant.describe('Its last heartbeat.'),
    clockOffsetMs: ClockOffset,
  }),
  'A worker that registered with the cluster; kept after it stops.',
);
export const WorkerPage = component('WorkerPage', page(Worker, 'A page of workers, by id.'));

export const SigningSecret = component(
  'SigningSecret',
  z.strictObject({ secret: z.string().min(32).describe('The HMAC-SHA256 key of the v1 signatures in Kairos-Signature.') }),
  "The namespace's webhook signing secret.",
);
export const RotatedSigningSecret = component(
  'RotatedSigningSecret',
  z.strictObject({
    secret: z.string().min(32).describe('The new secret; deliveries are signed with it from now on.'),
    previousValidUntil: Instant.describe('Until then deliveries carry a second v1 signature, made with the previous secret.'),
  }),
  'A rotated signing secret.',
);

const credentialFields = {
  role: z.string().describe('The Postgres login (and Redis user) of the credential.'),
  namespace: z.string(),
  queues: z.array(z.string().regex(QUEUE_NAME_PATTERN)),
  createdAt: Instant,
  createdBy: z.string().describe('Who granted it: an API key prefix or `cli`.'),
};
export const WorkerCredential = component(
  'WorkerCredential',
  z.strictObject(credentialFields),
  'A worker credential: a login that may call only the worker protocol, for one namespace and its queues.',
);
export const WorkerCredentialList = component('WorkerCredentialList', z.strictObject({ items: z.array(WorkerCredential) }), "The namespace's worker credentials.");
export const IssuedWorkerCredential = component(
  'IssuedWorkerCredential',
  z.strictObject({
    ...credentialFields,
    databaseUrl: z.string().describe("The worker's DATABASE_URL: the login and its password (shown only now) on the server's database."),
    redis: z
      .strictObject({
        user: z.string(),
        url: z.string().describe("The worker's REDIS_URL: the user and its password on the server's Redis."),
        command: z.string().describe('The ACL SETUSER command that makes the user: its keys are those of its queues only.'),
        applied: z.boolean().describe('True when Kairos made the user itself; false when Redis refused, and an operator must run the command.'),
      })
      .nullable()
      .describe('Null when the queues live in Postgres (no REDIS_URL).'),
    protocol: z.strictObject({ oldest: z.int(), newest: z.int() }).describe('The worker protocol versions the server serves.'),
  }),
  'A worker credential just made; its password is shown only in this answer.',
);

const FieldChangeShape = z.strictObject({
  field: z.string().describe('The changed field as a dotted path (`retry.maxAttempts`); `source` and `nextFireAt` say what else moves.'),
  from: JsonValue.describe('Its value before; null when absent.'),
  to: JsonValue.describe('Its value after; null when absent.'),
});

export const ApplyPlanItem = component(
  'ApplyPlanItem',
  z.strictObject({
    kind: z.enum(['schedule', 'sensor', 'calendar']),
    name: z.string(),
    action: z.enum(['create', 'update', 'unchanged', 'delete']),
    changes: z.array(FieldChangeShape).describe('For create, every field of the definition; for update, what changes; for unchanged and delete, none.'),
  }),
  'What an apply does, or would do, to one schedule, sensor or calendar (a calendar is never deleted by an apply).',
);
export const ApplyResult = component(
  'ApplyResult',
  z.strictObject({
    plan: z.array(ApplyPlanItem).describe('Each declared calendar, then each declared schedule in the order given and the deletions of a prune, then the sensors likewise.'),
    applied: z.boolean().describe('True when the plan was applied (in one transaction); false for a dry run.'),
  }),
  'The plan of an apply and whether it was applied.',
);
export const ScheduleVersion = component(
  'ScheduleVersion',
  z.strictObject({
    version: z.int().min(1),
    specHash: z.string(),
    source: z.string().nullable().describe('The apply source that made it; null for a change through the API.'),
    actor: z.string().describe('Who made it: an API key prefix, `cli`, or `migration` for the version recorded when versions began.'),
    appliedAt: Instant,
    changes: z.array(FieldChangeShape),
  }),
  "One version of a schedule's definition and the change that made it.",
);
export const ScheduleVersionPage = component('ScheduleVersionPage', page(ScheduleVersion, 'A page of versions, newest first.'));

// ---- The dashboard's reads ----

const partition = () => z.int().min(0).max(TICK_PARTITIONS - 1);
const counts = () => z.record(z.string(), count());

export const WhoAmI = component(
  'WhoAmI',
  z.strictObject({ namespaceId: z.uuid(), actor: z.string(), scopes: z.array(z.enum(API_SCOPES)) }),
  "The caller's namespace, actor and scopes.",
);

export const ClusterState = component(
  'Cluster',
  z.strictObject({
    leader: z.strictObject({ holder: z.string(), epoch: z.int().min(1), expiresAt: Instant, live: z.boolean() }).nullable(),
    sessions: z.array(z.strictObject({ holder: z.string(), startedAt: Instant, lastSeenAt: Instant })),
    schedulers: z
      .array(
        z.strictObject({
          holder: z.string(),
          hostname: z.string(),
          pid: z.int(),
          startedAt: Instant,
          lastSeenAt: Instant,
          live: z.boolean().describe('Its heartbeat is fresher than the lease TTL.'),
          clockOffsetMs: ClockOffset,
          partitions: z.array(partition()),
        }),
      )
      .describe('The scheduler processes sharing the tick, oldest first, with the partitions each owns now.'),
    partitions: z
      .array(
        z.strictObject({
          partition: partition(),
          holder: z.string().nullable().describe('Null for a partition never owned.'),
          epoch: count(),
          expiresAt: Instant,
          live: z.boolean(),
          coveredSince: Instant.describe('Since when it has been owned without a gap: slots due before this fell into an outage.'),
        }),
      )
      .describe(`Every tick partition (schedules fall into ${TICK_PARTITIONS} by a hash of their id) and its lease.`),
    runs: counts().describe('Runs of the namespace by state.'),
    queue: counts().describe('BullMQ jobs by state (waiting, active, delayed, failed, prioritized).'),
    outages: z
      .array(
        z.strictObject({
          startedAt: Instant,
          endedAt: Instant,
          reasonCode: z.string(),
          partition: partition().nullable().describe('Null for a span without a leader.'),
        }),
      )
      .describe('The ten most recent spans without a leader, or without an owner of one partition, newest first.'),
  }),
  'The leader lease, live scheduler sessions, the schedulers and their partitions, run counts of the namespace, queue depths and recent outages.',
);

export const LatestTickList = component(
  'LatestTickList',
  z.strictObject({
    items: z.array(z.strictObject({ scheduleId: z.uuid(), scheduledFor: Instant, outcome: TickOutcome, reasonCode: ReasonCodeSchema, runId: z.uuid().nullable() })),
  }),
  'The newest tick of each listed schedule; schedules without ticks are left out.',
);

const millis = () => z.number().min(0).nullable();
export const RunStats = component(
  'RunStats',
  z.strictObject({
    buckets: z
      .array(
        z.strictObject({
          start: Instant.describe('The start of the bucket; it holds the runs that finished from here to the next start.'),
          succeeded: count(),
          failed: count().describe('Runs that ended in the terminal state failed without being dead-lettered (an attempt that failed and will retry is not counted; a run whose retries ran out ends dead).'),
          dead: count().describe('Runs that ended dead (dead-lettered).'),
          cancelled: count(),
          durationP50Ms: millis().describe('The median of finishedAt − startedAt over the bucket\'s runs that started (percentile_cont); null without any.'),
          durationP95Ms: millis().describe('The 95th percentile of finishedAt − startedAt (percentile_cont); null without any.'),
          latenessP95Ms: millis().describe('The 95th percentile of startedAt − scheduledFor, a run started early counting as 0 (percentile_cont); null without any.'),
        }),
      )
      .describe('Every bucket of the window, oldest first, empty ones included (zero counts, null percentiles).'),
  }),
  'Runs that ended in a window, by the bucket of their finishedAt: how many ended in each terminal state, their durations and their lateness.',
);
