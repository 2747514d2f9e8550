/**
 * The closed sets of the ledger. Each is mirrored by a CHECK constraint in the SQL migrations;
 * test/ledger/schema.spec.ts fails when the two disagree.
 */

/**
 * sleeping and waiting are a durable function parked by ctx.sleep or ctx.waitForSignal: active,
 * without a lease or a worker slot.
 */
export const RUN_STATES = ['queued', 'running', 'sleeping', 'waiting', 'succeeded', 'failed', 'cancelled', 'dead'] as const;
export type RunState = (typeof RUN_STATES)[number];

/** The states of a run not yet ended. */
export const ACTIVE_RUN_STATES: readonly RunState[] = ['queued', 'running', 'sleeping', 'waiting'];

export const TERMINAL_RUN_STATES: readonly RunState[] = ['succeeded', 'failed', 'cancelled', 'dead'];

/** The ended runs POST /v1/runs/:id/retry (and a bulk retry) runs again: those that did not succeed. */
export const RETRYABLE_RUN_STATES: readonly RunState[] = ['failed', 'dead', 'cancelled'];

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}

export const RUN_ORIGINS = ['schedule', 'manual', 'retry', 'backfill', 'republish', 'sensor', 'event'] as const;
export type RunOrigin = (typeof RUN_ORIGINS)[number];

export const TICK_OUTCOMES = ['triggered', 'skipped', 'missed', 'error'] as const;
export type TickOutcome = (typeof TICK_OUTCOMES)[number];

export const TICK_ORIGINS = ['schedule', 'backfill'] as const;
export type TickOrigin = (typeof TICK_ORIGINS)[number];

/** cron, every and at fire on slots of the clock; event schedules are started by events (`on`). */
export const SCHEDULE_KINDS = ['cron', 'every', 'at', 'event'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

export const SCHEDULE_STATUSES = ['active', 'paused', 'completed', 'deleted'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

export const OVERLAP_POLICIES = ['allow', 'skip', 'buffer_one', 'buffer_all', 'replace'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const CATCHUP_MODES = ['none', 'latest', 'all'] as const;
export type CatchupMode = (typeof CATCHUP_MODES)[number];

export const BACKOFF_TYPES = ['fixed', 'exponential'] as const;
export type BackoffType = (typeof BACKOFF_TYPES)[number];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** How one execution attempt ended; null while it runs. */
export const ATTEMPT_OUTCOMES = ['succeeded', 'failed', 'cancelled', 'lost', 'drained', 'handed_back', 'parked'] as const;
export type AttemptOutcomeKind = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * How a worker treats a run pinned to another version of the code (a run that stored a checkpoint
 * under it): `pinned` leaves it to that version's workers, `auto` takes it over. The workers CHECK
 * lists the same.
 */
export const WORKER_UPGRADES = ['pinned', 'auto'] as const;
export type WorkerUpgrade = (typeof WORKER_UPGRADES)[number];

/** A durable function's checkpoints: a step's stored result, a sleep, a wait for a signal or for an event. */
export const CHECKPOINT_KINDS = ['step', 'sleep', 'signal', 'event'] as const;
export type CheckpointKind = (typeof CHECKPOINT_KINDS)[number];

/** step: succeeded; sleep: sleeping, then woken; signal and event: waiting, then received or timed_out. */
export const CHECKPOINT_STATES = ['succeeded', 'sleeping', 'woken', 'waiting', 'received', 'timed_out'] as const;
export type CheckpointState = (typeof CHECKPOINT_STATES)[number];

/** What a run_events row says happened. */
export const RUN_EVENT_KINDS = [
  'queued',
  'enqueued',
  'claimed',
  'renewed',
  'succeeded',
  'failed',
  'retry_scheduled',
  'dead',
  'cancel_requested',
  'cancelled',
  'lease_lost',
  'reaped',
  'poisoned',
  'released',
  'drained',
  'handed_back',
  'started',
  'skipped',
  'slept',
  'awaiting_signal',
  'signalled',
  'awaiting_event',
  'event_received',
  'event_gathered',
  'held',
  'upgraded',
  'version_moved',
] as const;
export type RunEventKind = (typeof RUN_EVENT_KINDS)[number];

/**
 * The events a subscription may listen to, each with what it means: the one list the API's
 * validation, its documents and the documentation's alerts page read. Those marked `listened` are
 * written to the outbox only while an active subscription of the namespace listens to them (they
 * would otherwise cost every run a row); the others always are.
 */
export const SUBSCRIPTION_EVENTS = {
  'run.succeeded': { listened: true, meaning: 'a run (not a step of one) succeeded' },
  'run.failed': { listened: true, meaning: "an attempt of a run failed: it is retried (`willRetry`) or the run is dead" },
  'run.dead': { listened: false, meaning: 'a run ended dead: its attempts or crash budget are used up, or its failure is not retryable' },
  'schedule.created': { listened: false, meaning: 'a schedule was created' },
  'schedule.updated': { listened: false, meaning: "a schedule's definition changed" },
  'schedule.paused': { listened: false, meaning: 'a schedule was paused' },
  'schedule.resumed': { listened: false, meaning: 'a schedule was resumed' },
  'schedule.deleted': { listened: false, meaning: 'a schedule was deleted' },
  'schedule.completed': { listened: false, meaning: 'a schedule has no slot left (a one-shot fired, `endAt` or `maxRuns` reached)' },
  'schedule.missed': { listened: true, meaning: 'a slot was missed (an outage or a pause swallowed it and catch-up did not fire it)' },
  'schedule.late': { listened: false, meaning: "a slot's run had not succeeded within the schedule's `expect.succeededWithin` (once per slot)" },
  'schedule.recovered': { listened: false, meaning: 'a late schedule had a slot succeed within its deadline again' },
  'sensor.failed': { listened: true, meaning: "an evaluation of a sensor failed: nothing of it was committed" },
  'outage.detected': { listened: true, meaning: 'no scheduler (or no owner of a partition) ran for a while; sent to every namespace that listens' },
  'subscription.disabled': { listened: false, meaning: "another subscription of the namespace failed its deliveries for the whole retry window and was disabled" },
} as const;
export type SubscriptionEvent = keyof typeof SUBSCRIPTION_EVENTS;
export const SUBSCRIPTION_EVENT_TYPES = Object.keys(SUBSCRIPTION_EVENTS) as SubscriptionEvent[];

/**
 * The topics of domain events (the outbox), published to the `<prefix>:events` Redis stream: the
 * subscribable events, and `ping`, a subscription's test delivery.
 */
export const DOMAIN_EVENT_TOPICS = [...(Object.keys(SUBSCRIPTION_EVENTS) as SubscriptionEvent[]), 'ping'] as const;
export type DomainEventTopic = SubscriptionEvent | 'ping';

/** The states of a subscription; the subscriptions CHECK lists the same. */
export const SUBSCRIPTION_STATES = ['active', 'paused', 'disabled'] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

/** The formats of a subscription's deliveries: Kairos's JSON body, or a Slack incoming-webhook message. */
export const SUBSCRIPTION_FORMATS = ['json', 'slack'] as const;
export type SubscriptionFormat = (typeof SUBSCRIPTION_FORMATS)[number];

/** The states of one delivery; the subscription_deliveries CHECK lists the same. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Payloads and results travel as JSON values. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The largest payload a schedule or run accepts, measured as serialized UTF-8 JSON. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
