/**
 * Durable functions: what a handler's `ctx.step`, `ctx.sleep`, `ctx.waitForSignal` and
 * `ctx.idempotencyKey` do. A handler runs from the top on every attempt of its run; each
 * checkpoint it passes is looked up in the ledger first (read once per attempt):
 * - a step whose result is stored returns it without running again; one that returns has its
 *   result stored, fenced by the run's lease epoch, before `ctx.step` resolves;
 * - a sleep parks the run `sleeping` until its wake instant and ends the attempt (RunParked); the
 *   run's job is delayed to that instant and the next attempt passes the sleep at once;
 * - a wait for a signal answers a signal already sent, or null once its timeout passed, or parks
 *   the run `waiting` until the signal comes (the API wakes it) or the timeout does.
 * Code outside ctx.step runs again on every attempt: side effects belong in steps.
 */
import { backoffDelayMs, DEFAULT_RETRY_POLICY, parseDuration, type JsonValue, type RetryPolicy } from '@kairos/domain';
import { NonRetryableError } from './non-retryable-error.js';
import { RunAborted } from './run-abort.js';
import type { WorkerProtocolCheckpoint } from './worker-protocol.js';

/** What a durable function needs of the ledger, for one run held at one lease epoch. */
export interface CheckpointLedger {
  checkpoints(runId: string): Promise<WorkerProtocolCheckpoint[]>;
  saveStep(runId: string, epoch: number, name: string, result: JsonValue | null, startedAt: Date): Promise<boolean>;
  sleepRun(runId: string, epoch: number, name: string, wakeAt: Date): Promise<boolean>;
  awaitSignal(runId: string, epoch: number, name: string, timeoutAt: Date | null): Promise<{ outcome: 'received' | 'timed_out' | 'parked' | 'lost'; body: JsonValue | null; wakeAt: Date | null }>;
  /** The database's clock, in epoch ms. */
  now(): number;
}

/** A duration as the API takes it (`"90s"`, `"3d"`, or milliseconds). */
export type DurationInput = string | number;

export interface StepOptions {
  /** How often the step is tried before its error ends the attempt. Default: the run's policy. */
  retry?: { maxAttempts?: number; backoff?: { type?: 'fixed' | 'exponential'; base?: DurationInput; max?: DurationInput; jitter?: number } };
}

export interface DurableContext {
  /** Runs `fn` once per run: its JSON result is stored (fenced by the lease) and returned by every later attempt. */
  step<T>(name: string, fn: () => T | Promise<T>, options?: StepOptions): Promise<T>;
  /** Parks the run, without a worker slot, for a duration or until an instant. */
  sleep(duration: DurationInput | { until: Date | string }): Promise<void>;
  /** The JSON body of signal `name` (POST /v1/runs/:id/signals/:name), or null once `timeout` passed. */
  waitForSignal<T = JsonValue>(name: string, options?: { timeout?: DurationInput }): Promise<T | null>;
  /** A key stable across the attempts of this run, for the services step `stepName` calls. */
  idempotencyKey(stepName: string): string;
}

/** Thrown through the handler when its run parked: the attempt ends without a verdict. Never catch it. */
export class RunParked extends Error {
  constructor(
    readonly state: 'sleeping' | 'waiting',
    /** When the run's job is due again; null for a wait without a timeout (a signal wakes it). */
    readonly wakeAt: Date | null,
  ) {
    super(`the run is ${state}${wakeAt ? ` until ${wakeAt.toISOString()}` : ' for a signal'}`);
    this.name = 'RunParked';
  }
}

const MAX_NAME = 200;

export function durableContext(ledger: CheckpointLedger, run: { id: string; leaseEpoch: number; retry: RetryPolicy }, signal: AbortSignal): DurableContext {
  let stored: Promise<Map<string, WorkerProtocolCheckpoint>> | null = null;
  const checkpoints = () => (stored ??= ledger.checkpoints(run.id).then((rows) => new Map(rows.map((c) => [c.name, c]))));
  const names = new Set<string>();
  let sleeps = 0;
  const lost = (what: string) => new RunAborted('lease_lost', `the lease of run ${run.id} at epoch ${run.leaseEpoch} was lost while ${what}`);
  const claimName = (name: string, what: string): void => {
    if (names.has(name)) throw new NonRetryableError(`${what} "${name}" is used twice in run ${run.id}; names are unique per run`);
    names.add(name);
  };

  return {
    async step<T>(name: string, fn: () => T | Promise<T>, options?: StepOptions): Promise<T> {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME || name.startsWith('sleep#') || name.startsWith('signal:')) {
        throw new NonRetryableError(`ctx.step needs a name of 1 to ${MAX_NAME} characters, not starting with "sleep#" or "signal:"; got ${JSON.stringify(name)}`);
      }
      claimName(name, 'ctx.step');
      const done = (await checkpoints()).get(name);
      if (done?.kind === 'step') return done.result as T;
      const policy = stepPolicy(options?.retry, run.retry);
      const startedAt = new Date(ledger.now());
      for (let attempt = 1; ; attempt++) {
        let result: JsonValue | null;
        try {
          result = asJson(await fn());
        } catch (error) {
          if (error instanceof NonRetryableError || error instanceof RunAborted || error instanceof RunParked || attempt >= policy.maxAttempts) throw error;
          await pause(backoffDelayMs(policy.backoff, attempt, Math.random()), signal);
          continue;
        }
        if (!(await ledger.saveStep(run.id, run.leaseEpoch, name, result, startedAt))) throw lost(`storing step ${name}`);
        return result as T;
      }
    },

    async sleep(duration: DurationInput | { until: Date | string }): Promise<void> {
      const name = `sleep#${++sleeps}`;
      claimName(name, 'ctx.sleep');
      const done = (await checkpoints()).get(name);
      const wakeAt = done?.wakeAt ?? wakeInstant(duration, ledger.now());
      if (wakeAt.getTime() <= ledger.now()) return;
      if (!(await ledger.sleepRun(run.id, run.leaseEpoch, name, wakeAt))) throw lost(`parking for ${name}`);
      throw new RunParked('sleeping', wakeAt);
    },

    async waitForSignal<T = JsonValue>(name: string, options?: { timeout?: DurationInput }): Promise<T | null> {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME) {
        throw new NonRetryableError(`ctx.waitForSignal needs a name of 1 to ${MAX_NAME} characters; got ${JSON.stringify(name)}`);
      }
      claimName(`signal:${name}`, 'ctx.waitForSignal');
      const done = (await checkpoints()).get(`signal:${name}`);
      if (done?.state === 'received') return done.result as T;
      if (done?.state === 'timed_out') return null;
      const timeoutAt = done ? done.wakeAt : options?.timeout === undefined ? null : new Date(ledger.now() + parseDuration(options.timeout));
      const answer = await ledger.awaitSignal(run.id, run.leaseEpoch, name, timeoutAt);
      switch (answer.outcome) {
        case 'received':
          return answer.body as T;
        case 'timed_out':
          return null;
        case 'parked':
          throw new RunParked('waiting', answer.wakeAt);
        case 'lost':
          throw lost(`waiting for signal ${name}`);
      }
    },

    idempotencyKey(stepName: string): string {
      return `${run.id}:${stepName}`;
    },
  };
}

function wakeInstant(duration: DurationInput | { until: Date | string }, nowMs: number): Date {
  if (typeof duration === 'object' && duration !== null && 'until' in duration) {
    const until = new Date(duration.until);
    if (Number.isNaN(until.getTime())) throw new NonRetryableError(`ctx.sleep({ until }) needs an instant; got ${JSON.stringify(duration.until)}`);
    return until;
  }
  return new Date(nowMs + parseDuration(duration));
}

function stepPolicy(retry: StepOptions['retry'], runs: RetryPolicy): RetryPolicy {
  if (retry === undefined) return runs;
  const base = retry.backoff ?? {};
  const backoff = runs.backoff ?? DEFAULT_RETRY_POLICY.backoff;
  return {
    maxAttempts: retry.maxAttempts ?? runs.maxAttempts,
    backoff: {
      type: base.type ?? backoff.type,
      baseMs: base.base === undefined ? backoff.baseMs : parseDuration(base.base),
      maxMs: base.max === undefined ? backoff.maxMs : parseDuration(base.max),
      jitter: base.jitter ?? backoff.jitter,
    },
  };
}

/** Waits `ms`, or until the run is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}

/** A step's result as the ledger stores it: JSON (a Date becomes its ISO string); undefined is null. */
export function asJson(result: unknown): JsonValue | null {
  if (result === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(result)) as JsonValue;
  } catch (error) {
    throw new NonRetryableError(`the handler returned a value that is not JSON: ${(error as Error).message}`);
  }
}
