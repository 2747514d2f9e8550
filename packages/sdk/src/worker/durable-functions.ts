/**
 * Durable functions: what a handler's `ctx.step`, `ctx.sleep`, `ctx.waitForSignal`,
 * `ctx.waitForEvent` and `ctx.idempotencyKey` do. A handler runs from the top on every attempt of
 * its run; each checkpoint it passes is looked up in the ledger first (read once per attempt):
 * - a step whose result is stored returns it without running again; one that returns has its
 *   result stored, fenced by the run's lease epoch, before `ctx.step` resolves;
 * - a sleep parks the run `sleeping` until its wake instant and ends the attempt (RunParked); the
 *   run's job is delayed to that instant and the next attempt passes the sleep at once;
 * - a wait for a signal answers a signal already sent, or null once its timeout passed, or parks
 *   the run `waiting` until the signal comes (the API wakes it) or the timeout does;
 * - a wait for an event answers the first matching event received since the attempt began (or since
 *   the event an earlier wait of the same name in this attempt got), or null once its timeout
 *   passed, or parks the run `waiting` until an event that matches is stored (the API wakes it) or
 *   the timeout comes. The ledger orders the wait's record with the events of its name, so an event
 *   stored meanwhile is seen by the wait or sees the wait, never neither.
 * Code outside ctx.step runs again on every attempt: side effects belong in steps. A replay must
 * take the path the run recorded: code that asks for a checkpoint the run did not store while a
 * stored one is still ahead (see replay.ts) fails the attempt with NONDETERMINISTIC_REPLAY rather
 * than do again, or skip, what the run did; `ctx.patched` lets changed code keep the old path for
 * the runs that took it.
 */
import { backoffDelayMs, DEFAULT_RETRY_POLICY, parseDuration, type JsonValue, type RetryPolicy } from '@kairos/domain';
import { NonRetryableError } from './non-retryable-error.js';
import { FAILED_PREFIX, NondeterministicReplay, PATCH_PREFIX, ReplayHistory } from './replay.js';
import { RunAborted } from './run-abort.js';
import type { EventWait, WaitAnswer, WorkerProtocolCheckpoint } from './worker-protocol.js';

/** What a durable function needs of the ledger, for one run held at one lease epoch. */
export interface CheckpointLedger {
  checkpoints(runId: string): Promise<WorkerProtocolCheckpoint[]>;
  saveStep(runId: string, epoch: number, name: string, result: JsonValue | null, startedAt: Date): Promise<boolean>;
  sleepRun(runId: string, epoch: number, name: string, wakeAt: Date): Promise<boolean>;
  awaitSignal(runId: string, epoch: number, name: string, timeoutAt: Date | null): Promise<WaitAnswer>;
  awaitEvent(runId: string, epoch: number, wait: EventWait): Promise<WaitAnswer>;
  /** Stores the run's progress (ctx.progress), JSON text of at most 64 KiB; false when the lease was lost. */
  reportProgress(runId: string, epoch: number, progressJson: string): Promise<boolean>;
  /** The database's clock, in epoch ms. */
  now(): number;
}

/** An event as a wait receives it: the event's id, name, data, and when the ledger stored it. */
export interface ReceivedEvent<T = JsonValue> {
  id: string;
  name: string;
  data: T;
  /** ISO 8601, the database's clock. */
  receivedAt: string;
}

export interface WaitForEventOptions {
  /**
   * What the event must carry: dotted paths into it, from `data`, `name` or `id`, each with the
   * JSON value it must equal (`{ 'data.orderId': ctx.payload.orderId }`); a path the event lacks
   * never matches. Absent or empty: any event of the name.
   */
  match?: Record<string, JsonValue>;
  /** How long to wait (`"3d"`, or milliseconds); the call answers null then. Absent: for ever. */
  timeout?: DurationInput;
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
  /**
   * The first event `name` (POST /v1/events) received since this wait began whose values fit
   * `match`, or null once `timeout` passed. The run parks `waiting`, without a worker slot, until
   * one is stored; each wait of a run gets its own event (checkpoint `event:<name>`, then
   * `event:<name>#2`, ...), and the event stored lists the run in its `resumed`.
   */
  waitForEvent<T = JsonValue>(name: string, options?: WaitForEventOptions): Promise<ReceivedEvent<T> | null>;
  /** A key stable across the attempts of this run, for the services step `stepName` calls. */
  idempotencyKey(stepName: string): string;
  /**
   * Whether this run meets change `id` of its code for the first time: true for a run that reaches
   * the call before it stored anything past it, false for a run that older code, without the call,
   * took past this point (it stored later checkpoints). The answer is stored with the run (a
   * checkpoint `patch:<id>`) and is the same on every later attempt; `id` is 1 to 200 characters.
   *
   * Changing the checkpoints of a handler whose runs are in flight (a step renamed, added, moved or
   * removed) otherwise fails their replays with NONDETERMINISTIC_REPLAY. To deploy such a change:
   * 1. wrap the new code in `if (await ctx.patched('charge-card')) { new } else { old }`, keeping
   *    the old branch as it was;
   * 2. deploy it, and wait until no run of the old version is active (GET /v1/versions);
   * 3. remove the old branch and the ctx.patched call. Runs that stored the marker replay without
   *    it: patch markers never count in the replay check.
   */
  patched(id: string): Promise<boolean>;
}

/** Thrown through the handler when its run parked: the attempt ends without a verdict. Never catch it. */
export class RunParked extends Error {
  constructor(
    readonly state: 'sleeping' | 'waiting',
    /** When the run's job is due again; null for a wait without a timeout (a signal or an event wakes it). */
    readonly wakeAt: Date | null,
  ) {
    super(`the run is ${state}${wakeAt ? ` until ${wakeAt.toISOString()}` : ' for a signal or an event'}`);
    this.name = 'RunParked';
  }
}

const MAX_NAME = 200;
/** An event's name, as the ledger stores events: a wait for any other could never be answered. */
const EVENT_NAME = /^[A-Za-z0-9._:-]{1,128}$/;
/** A match path: dotted names into the event, from one of the fields a match reads. */
const MATCH_PATH = /^(data|name|id)(\.[^.\s]+)*$/;
const MAX_MATCH_ENTRIES = 32;
/** The prefixes of the names the durable functions give their checkpoints; a step's name may not take them. */
const RESERVED_PREFIXES = ['sleep#', 'signal:', 'event:', PATCH_PREFIX, FAILED_PREFIX];

/** The next turn of the event loop, once every promise settled meanwhile has run its callbacks. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function durableContext(
  ledger: CheckpointLedger,
  run: {
    id: string;
    leaseEpoch: number;
    retry: RetryPolicy;
    /** When this attempt began, on the database's clock: a wait for an event looks back to it. */
    attemptStartedAt: Date;
  },
  signal: AbortSignal,
  /** Runs before the run may park (a sleep or a wait): the progress reported so far is written while the lease is held. */
  beforePark: () => Promise<void> = async () => undefined,
  /** Told when the code diverged from the run's checkpoints: the attempt fails even if the handler catches the error. */
  diverged: (error: NondeterministicReplay) => void = () => undefined,
): DurableContext {
  let stored: Promise<{ byName: Map<string, WorkerProtocolCheckpoint>; history: ReplayHistory }> | null = null;
  const checkpoints = () =>
    (stored ??= ledger.checkpoints(run.id).then((rows) => ({ byName: new Map(rows.map((c) => [c.name, c])), history: new ReplayHistory(rows.map((c) => c.name)) })));
  /** The checkpoint names the code asked for in this attempt, at the call: what it reached of the run's stored ones. */
  const names = new Set<string>();
  let divergence: NondeterministicReplay | null = null;
  /** ctx.patched's answers in this attempt, by id. */
  const patches = new Map<string, Promise<boolean>>();
  let sleeps = 0;
  /** How many waits for each event name the handler reached, and the last event one of them got. */
  const eventWaits = new Map<string, { count: number; lastReceivedMs: number }>();
  const lost = (what: string) => new RunAborted('lease_lost', `the lease of run ${run.id} at epoch ${run.leaseEpoch} was lost while ${what}`);
  const claimName = (name: string, what: string): void => {
    if (names.has(name)) throw new NonRetryableError(`${what} "${name}" is used twice in run ${run.id}; names are unique per run`);
    names.add(name);
  };
  /**
   * The stored checkpoint `name` (already claimed), or undefined when it is new work. New work while
   * a stored checkpoint is still ahead is a divergence, unless branches running side by side reach
   * the stored ones meanwhile: stored checkpoints answer without waiting for anything, so one turn
   * of the event loop lets those branches get there before the attempt fails. Once diverged, every
   * checkpoint fails the same way.
   */
  const replayed = async (name: string): Promise<WorkerProtocolCheckpoint | undefined> => {
    const { byName, history } = await checkpoints();
    if (divergence) throw divergence;
    let answer = history.answer(names, name);
    if (answer.kind === 'diverged') {
      await nextTurn();
      answer = history.answer(names, name);
    }
    if (answer.kind === 'diverged') {
      divergence ??= new NondeterministicReplay(run.id, name, answer.stored);
      diverged(divergence);
      throw divergence;
    }
    return answer.kind === 'stored' ? byName.get(name) : undefined;
  };
  const patchAnswer = async (id: string): Promise<boolean> => {
    const marker = `${PATCH_PREFIX}${id}`;
    const { byName, history } = await checkpoints();
    if (divergence) throw divergence;
    const done = byName.get(marker);
    if (done) return done.result === true;
    // As for a divergence, branches side by side first reach the stored checkpoints they replay.
    if (history.firstUnreached(names) !== null) await nextTurn();
    const answer = history.firstPatchAnswer(names);
    if (!(await ledger.saveStep(run.id, run.leaseEpoch, marker, answer, new Date(ledger.now())))) throw lost(`storing ${marker}`);
    return answer;
  };

  return {
    async step<T>(name: string, fn: () => T | Promise<T>, options?: StepOptions): Promise<T> {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME || RESERVED_PREFIXES.some((p) => name.startsWith(p))) {
        throw new NonRetryableError(
          `ctx.step needs a name of 1 to ${MAX_NAME} characters, not starting with ${RESERVED_PREFIXES.map((p) => `"${p}"`).join(', ')}; got ${JSON.stringify(name)}`,
        );
      }
      claimName(name, 'ctx.step');
      const done = await replayed(name);
      if (done?.kind === 'step') return done.result as T;
      const policy = stepPolicy(options?.retry, run.retry);
      const startedAt = new Date(ledger.now());
      for (let attempt = 1; ; attempt++) {
        let result: JsonValue | null;
        try {
          result = asJson(await fn());
        } catch (error) {
          if (error instanceof RunAborted || error instanceof RunParked) throw error;
          if (error instanceof NonRetryableError || attempt >= policy.maxAttempts) {
            // Recorded, so that a replay which asks for this step again is on the path the run
            // took, whether or not the handler catches the error (see FAILED_PREFIX).
            await ledger.saveStep(run.id, run.leaseEpoch, `${FAILED_PREFIX}${name}`, { message: (error as Error)?.message ?? String(error) }, startedAt);
            throw error;
          }
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
      const done = await replayed(name);
      const wakeAt = done?.wakeAt ?? wakeInstant(duration, ledger.now());
      if (wakeAt.getTime() <= ledger.now()) return;
      await beforePark();
      if (!(await ledger.sleepRun(run.id, run.leaseEpoch, name, wakeAt))) throw lost(`parking for ${name}`);
      throw new RunParked('sleeping', wakeAt);
    },

    async waitForSignal<T = JsonValue>(name: string, options?: { timeout?: DurationInput }): Promise<T | null> {
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME) {
        throw new NonRetryableError(`ctx.waitForSignal needs a name of 1 to ${MAX_NAME} characters; got ${JSON.stringify(name)}`);
      }
      claimName(`signal:${name}`, 'ctx.waitForSignal');
      const done = await replayed(`signal:${name}`);
      if (done?.state === 'received') return done.result as T;
      if (done?.state === 'timed_out') return null;
      const timeoutAt = done ? done.wakeAt : options?.timeout === undefined ? null : new Date(ledger.now() + parseDuration(options.timeout));
      await beforePark();
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

    async waitForEvent<T = JsonValue>(name: string, options?: WaitForEventOptions): Promise<ReceivedEvent<T> | null> {
      if (typeof name !== 'string' || !EVENT_NAME.test(name)) {
        throw new NonRetryableError(`ctx.waitForEvent needs an event name of 1 to 128 letters, digits, ".", "_", ":" or "-"; got ${JSON.stringify(name)}`);
      }
      const match = eventMatch(options?.match);
      const timeoutMs = options?.timeout === undefined || options.timeout === null ? null : waitTimeout(options.timeout);
      const seen = eventWaits.get(name) ?? { count: 0, lastReceivedMs: -Infinity };
      seen.count += 1;
      eventWaits.set(name, seen);
      // The n-th wait on a name in the run: a name of its own, the same on every replay.
      const checkpoint = seen.count === 1 ? `event:${name}` : `event:${name}#${seen.count}`;
      claimName(checkpoint, 'ctx.waitForEvent');
      const received = (body: JsonValue | null): ReceivedEvent<T> => {
        const event = body as unknown as ReceivedEvent<T>;
        const at = Date.parse(event.receivedAt);
        if (!Number.isNaN(at)) seen.lastReceivedMs = Math.max(seen.lastReceivedMs, at);
        return event;
      };
      const done = await replayed(checkpoint);
      if (done?.state === 'received') return received(done.result);
      if (done?.state === 'timed_out') return null;
      const timeoutAt = done ? done.wakeAt : timeoutMs === null ? null : new Date(ledger.now() + timeoutMs);
      // From the attempt's start, so an event sent while the run was on its way here is not missed;
      // past the event the previous wait on this name got (its instant is in whole milliseconds), so
      // that event does not answer this wait again.
      const since = new Date(Math.max(run.attemptStartedAt.getTime(), seen.lastReceivedMs + 1));
      await beforePark();
      const answer = await ledger.awaitEvent(run.id, run.leaseEpoch, { checkpoint, name, match, since, timeoutAt });
      switch (answer.outcome) {
        case 'received':
          return received(answer.body);
        case 'timed_out':
          return null;
        case 'parked':
          throw new RunParked('waiting', answer.wakeAt);
        case 'lost':
          throw lost(`waiting for event ${name}`);
      }
    },

    idempotencyKey(stepName: string): string {
      return `${run.id}:${stepName}`;
    },

    async patched(id: string): Promise<boolean> {
      if (typeof id !== 'string' || id.length === 0 || id.length > MAX_NAME) {
        throw new TypeError(`ctx.patched needs an id of 1 to ${MAX_NAME} characters; got ${JSON.stringify(id)}`);
      }
      let answer = patches.get(id);
      if (answer === undefined) patches.set(id, (answer = patchAnswer(id)));
      return answer;
    },
  };
}

/** A wait's `match`, checked: an object of dotted paths from data, name or id to JSON values. */
function eventMatch(match: unknown): Record<string, JsonValue> {
  if (match === undefined || match === null) return {};
  if (typeof match !== 'object' || Array.isArray(match)) {
    throw new NonRetryableError(`ctx.waitForEvent's match must be an object of dotted paths to values, e.g. { "data.orderId": 42 }; got ${kindOf(match)}`);
  }
  const entries = Object.entries(match as Record<string, unknown>);
  if (entries.length > MAX_MATCH_ENTRIES) throw new NonRetryableError(`ctx.waitForEvent's match has ${entries.length} entries; at most ${MAX_MATCH_ENTRIES}`);
  const checked: Record<string, JsonValue> = {};
  for (const [path, value] of entries) {
    if (!MATCH_PATH.test(path)) {
      throw new NonRetryableError(`ctx.waitForEvent's match path "${path}" must be a dotted path into the event starting at data, name or id, e.g. "data.orderId"`);
    }
    // An undefined value (a payload field misspelt) would drop the entry and match every event.
    if (value === undefined) throw new NonRetryableError(`ctx.waitForEvent's match value at "${path}" is undefined; give the JSON value the event must carry there`);
    let json: JsonValue | null;
    try {
      json = JSON.parse(JSON.stringify(value)) as JsonValue | null;
    } catch (error) {
      // A function or a symbol stringifies to undefined, which does not parse.
      throw new NonRetryableError(`ctx.waitForEvent's match value at "${path}" is not JSON: ${(error as Error).message}`);
    }
    checked[path] = json as JsonValue;
  }
  return checked;
}

function waitTimeout(timeout: DurationInput): number {
  try {
    return parseDuration(timeout);
  } catch (error) {
    throw new NonRetryableError(`ctx.waitForEvent's timeout: ${(error as Error).message}`);
  }
}

function kindOf(value: unknown): string {
  return Array.isArray(value) ? 'an array' : typeof value === 'string' ? JSON.stringify(value) : typeof value;
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
