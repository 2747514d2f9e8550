/**
 * The one closed catalogue of reason codes. Every terminal run, every tick and every dead letter
 * carries one of these; the ledger stores the code and free text beside it.
 */
export const REASON_CODES = {
  // Runs that finished.
  SUCCEEDED: 'the target completed successfully',
  HANDLER_ERROR: 'the handler threw an error',
  HANDLER_NON_RETRYABLE: 'the handler threw an error it marked as not retryable',
  UNKNOWN_HANDLER: 'no handler of that name is registered in the worker',
  NONDETERMINISTIC_REPLAY: "the handler's code asked for a different checkpoint than the one its run stored at that point (the code changed under a run in flight)",
  HTTP_5XX: 'the HTTP target answered with a 5xx status',
  HTTP_4XX: 'the HTTP target answered with a 4xx status that retrying cannot fix',
  HTTP_RETRYABLE_STATUS: 'the HTTP target answered 408 or 429',
  HTTP_REDIRECT: 'the HTTP target answered with a redirect, which is not followed',
  HTTP_NETWORK_ERROR: 'the HTTP target could not be reached',
  TARGET_REFUSED: 'the target address is not allowed (loopback, private or link-local)',
  TIMEOUT: 'the run exceeded its timeout',
  CANCELLED_BY_USER: 'cancellation was requested through the API',
  REPLACED_BY_OVERLAP: 'a newer slot of the schedule replaced this run (overlap replace)',
  SCHEDULE_DELETED: 'the schedule was deleted before the run started',
  SCHEDULE_PAUSED: 'the schedule was paused: before the slot of this run, made ahead of it, came due, or when an event it listens to arrived',
  SCHEDULE_CHANGED: 'the schedule was redefined before the slot of this run, made ahead of it, came due; the slot is planned again',
  POISONED: 'the run outlived its crash budget: every executor holding it died',
  STEP_FAILED: 'a step of the run ended without succeeding',
  UPSTREAM_FAILED: 'a step this step depends on did not succeed, so the step was skipped',
  CONCURRENCY_KEY_UNRESOLVED: "the run's concurrency key names a payload field its payload does not have",
  FLOW_KEY_UNRESOLVED: "the key of the schedule's debounce, throttle, rate limit or batch names a field the event does not have; the event made no run for it",
  RATE_LIMITED: "the schedule's rate limit made as many runs for the event's key as its window allows; the event made none",
  // Run transitions that are not terminal.
  LEASE_EXPIRED: 'the executor stopped renewing its lease and the run was taken back',
  LEASE_LOST: 'the executor lost its lease; its verdict was refused',
  RETRY_SCHEDULED: 'the attempt failed and another attempt is scheduled',
  OVERLAP_BUFFERED: 'an earlier run of the schedule was still active; this run waits for it',
  CONCURRENCY_LIMIT: 'as many runs holding its concurrency key as its limit allows are running; it starts when one ends',
  QUEUE_LIMIT: "as many runs of its queue as the queue's maxRunning allows are running; it starts when one ends",
  QUEUE_RATE_LIMIT: "its queue's rate limit is reached; it starts when the window allows",
  THROTTLED: "the schedule's throttle allows no more starts for its key in this window; it starts when the window allows",
  HANDLER_NOT_REGISTERED: 'the worker that received the run has no handler of that name; it handed the run back for a worker that has',
  // Ticks.
  TRIGGERED: 'the slot fired and created a run',
  OVERLAP_SKIPPED: 'an earlier run of the schedule was still active (overlap skip)',
  CATCHUP_NONE: 'the slot passed while the scheduler was down or the schedule paused (catch-up none)',
  CATCHUP_SUPERSEDED: 'a later missed slot was fired instead (catch-up latest)',
  CATCHUP_WINDOW_MISSED: 'the slot is older than the catch-up window',
  CATCHUP_LIMIT_EXCEEDED: 'more slots were missed than the catch-up limit allows; the newest were kept',
  CALENDAR_EXCLUDED: "the slot's local date is excluded by the schedule's calendar; no slot of that date fires",
  INVALID_DEFINITION: 'the stored definition could not be evaluated',
  // Sensor evaluations.
  SENSOR_CURSOR_MOVED: "the sensor's cursor was moved while the evaluation ran; nothing it asked for was committed",
  SENSOR_RESULT_INVALID: 'the evaluation answered something other than { runs: [{ runKey, payload }], cursor }; nothing was committed',
  SENSOR_EVALUATION_FAILED: 'the evaluation run did not succeed; the cursor stays where it was',
  SENSOR_EVALUATION_ABANDONED: 'the evaluation did not end within its timeout; it was cancelled and the next one starts from the same cursor',
  // Outages.
  SCHEDULER_CRASHED: 'the leading scheduler stopped heartbeating without releasing its lease',
  SCHEDULER_STOPPED: 'no scheduler was running after the last one stopped cleanly',
} as const;

export type ReasonCode = keyof typeof REASON_CODES;

export function isReasonCode(value: string): value is ReasonCode {
  return Object.hasOwn(REASON_CODES, value);
}
