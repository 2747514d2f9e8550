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

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}

export const RUN_ORIGINS = ['schedule', 'manual', 'retry', 'backfill', 'republish', 'sensor'] as const;
export type RunOrigin = (typeof RUN_ORIGINS)[number];

export const TICK_OUTCOMES = ['triggered', 'skipped', 'missed', 'error'] as const;
export type TickOutcome = (typeof TICK_OUTCOMES)[number];

export const TICK_ORIGINS = ['schedule', 'backfill'] as const;
export type TickOrigin = (typeof TICK_ORIGINS)[number];

export const SCHEDULE_KINDS = ['cron', 'every', 'at'] as const;
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

/** A durable function's checkpoints: a step's stored result, a sleep, a wait for a signal. */
export const CHECKPOINT_KINDS = ['step', 'sleep', 'signal'] as const;
export type CheckpointKind = (typeof CHECKPOINT_KINDS)[number];

/** step: succeeded; sleep: sleeping, then woken; signal: waiting, then received or timed_out. */
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
  'held',
] as const;
export type RunEventKind = (typeof RUN_EVENT_KINDS)[number];

/** The topics of domain events (the outbox), published to the `<prefix>:events` Redis stream. */
export const DOMAIN_EVENT_TOPICS = [
  'schedule.created',
  'schedule.updated',
  'schedule.paused',
  'schedule.resumed',
  'schedule.deleted',
  'schedule.completed',
  'run.dead',
] as const;
export type DomainEventTopic = (typeof DOMAIN_EVENT_TOPICS)[number];

/** Payloads and results travel as JSON values. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The largest payload a schedule or run accepts, measured as serialized UTF-8 JSON. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
