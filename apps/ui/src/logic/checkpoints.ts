/**
 * A durable function's checkpoints as the run page draws them: one row per checkpoint in the order
 * they began, told in words (kind, state, times, the instant a sleep wakes or a wait times out, the
 * stored result or signal body), the signal a waiting run asks for, and checking a signal before it
 * is sent.
 */
import type { Checkpoint, CheckpointKind, CheckpointState, JsonValue, RunState, SignalResult } from '../data/wire/index.js';
import { durationBetween } from './run-story.js';

/** The states of a run not yet ended: it may be cancelled, and sent signals. */
export const ACTIVE_RUN_STATES: readonly RunState[] = ['queued', 'running', 'sleeping', 'waiting'];

export function isActiveRunState(state: RunState): boolean {
  return ACTIVE_RUN_STATES.includes(state);
}

/**
 * Whether the run page reads the run again every few seconds: a step's progress and a durable
 * function's steps are no events of the run itself. A parked run (sleeping, waiting) moves on only
 * with an event, which reloads the page anyway.
 */
export function readsAgain(run: { state: RunState; steps: readonly unknown[] | null; checkpoints: readonly unknown[] }): boolean {
  if (run.steps !== null) return run.state === 'queued' || run.state === 'running';
  return run.state === 'running' && run.checkpoints.length > 0;
}

/** Each kind's mark (beside its word, never alone) and word. */
export const CHECKPOINT_KINDS: Record<CheckpointKind, { icon: string; label: string }> = {
  step: { icon: '◆', label: 'step' },
  sleep: { icon: '☾', label: 'sleep' },
  signal: { icon: '✉', label: 'signal' },
  event: { icon: '⚡', label: 'event' },
};

/** Each state's short label (its badge) and what it means. */
export const CHECKPOINT_STATES: Record<CheckpointState, { label: string; words: string }> = {
  succeeded: { label: 'succeeded', words: 'its result is stored; a replay returns it without running the step again' },
  sleeping: { label: 'sleeping', words: 'the run sleeps until the wake instant' },
  woken: { label: 'woken', words: 'the sleep is over' },
  waiting: { label: 'waiting', words: 'the run waits for this signal' },
  received: { label: 'received', words: 'the signal arrived; its body is what the wait returned' },
  timed_out: { label: 'timed out', words: 'the signal did not arrive before the timeout' },
};

/** What a wait for an event means in each of its states, where it differs from a signal's. */
const EVENT_STATE_WORDS: Partial<Record<CheckpointState, string>> = {
  waiting: 'the run waits for a matching event',
  received: 'a matching event arrived; it is what the wait returned',
  timed_out: 'no matching event arrived before the timeout',
};

/** What the instant of wakeAt is to each state. */
const WAKE_LABELS: Record<CheckpointState, string> = {
  succeeded: 'wakes',
  sleeping: 'wakes',
  woken: 'was due',
  waiting: 'times out',
  received: 'timeout',
  timed_out: 'timed out',
};

export interface CheckpointRow {
  name: string;
  kind: CheckpointKind;
  icon: string;
  kindLabel: string;
  state: CheckpointState;
  stateLabel: string;
  stateWords: string;
  startedAt: string;
  finishedAt: string | null;
  /** `1.2 s` from start to finish; empty while open. */
  took: string;
  /** A sleep's wake instant or a wait's timeout, with what it is; null for a step, or a wait without timeout. */
  wake: { label: string; at: string } | null;
  /** `Result` of a step, `Body` of a signal, `Event` of an event wait. */
  resultLabel: string;
  /** The result or body as indented JSON; null when there is none to show. */
  result: string | null;
}

export function checkpointRows(checkpoints: readonly Checkpoint[]): CheckpointRow[] {
  return checkpoints.map((c) => ({
    name: c.name,
    kind: c.kind,
    icon: CHECKPOINT_KINDS[c.kind].icon,
    kindLabel: CHECKPOINT_KINDS[c.kind].label,
    state: c.state,
    stateLabel: CHECKPOINT_STATES[c.state].label,
    stateWords: (c.kind === 'event' ? EVENT_STATE_WORDS[c.state] : undefined) ?? CHECKPOINT_STATES[c.state].words,
    startedAt: c.startedAt,
    finishedAt: c.finishedAt,
    took: durationBetween(c.startedAt, c.finishedAt),
    wake: c.wakeAt === null ? null : { label: WAKE_LABELS[c.state], at: c.wakeAt },
    resultLabel: c.kind === 'signal' ? 'Body' : c.kind === 'event' ? 'Event' : 'Result',
    result: hasResult(c) ? JSON.stringify(c.result ?? null, null, 2) : null,
  }));
}

/** A step that succeeded and a signal received have a result (null is one); the rest only when one is stored. */
function hasResult(c: Checkpoint): boolean {
  if (c.state === 'succeeded' || c.state === 'received') return true;
  return c.result !== null && c.result !== undefined;
}

const SIGNAL_PREFIX = 'signal:';

/** `signal:approval` → `approval`: the name ctx.waitForSignal was given, which a sender uses. */
export function signalNameOf(checkpointName: string): string {
  return checkpointName.startsWith(SIGNAL_PREFIX) ? checkpointName.slice(SIGNAL_PREFIX.length) : checkpointName;
}

/** The signal a waiting run waits for (its newest wait still open), or null. */
export function awaitedSignal(run: { state: RunState; checkpoints: readonly Checkpoint[] }): string | null {
  if (run.state !== 'waiting') return null;
  const open = run.checkpoints.filter((c) => c.kind === 'signal' && c.state === 'waiting').at(-1);
  return open === undefined ? null : signalNameOf(open.name);
}

/** The longest signal name the API takes. */
export const MAX_SIGNAL_NAME = 200;

export type SignalRequest = { ok: true; name: string; body: JsonValue } | { ok: false; field: 'name' | 'body'; message: string };

/** A signal as the form gives it: a name, and its body as JSON text (empty for `{}`); or why it cannot be sent. */
export function signalRequest(name: string, bodyText: string): SignalRequest {
  if (name.length === 0) return { ok: false, field: 'name', message: 'a signal name is required' };
  if (name.length > MAX_SIGNAL_NAME) return { ok: false, field: 'name', message: `a signal name is at most ${MAX_SIGNAL_NAME} characters` };
  if (bodyText.trim() === '') return { ok: true, name, body: {} };
  try {
    return { ok: true, name, body: JSON.parse(bodyText) as JsonValue };
  } catch (error) {
    return { ok: false, field: 'body', message: `the body is not valid JSON (${(error as Error).message}); write e.g. {"approved": true}` };
  }
}

/** The API's answer to a signal sent, in words. */
export function signalAnswerInWords(name: string, answer: SignalResult): string {
  return answer.delivered
    ? `Signal "${name}" delivered: the run was waiting for it and resumes now.`
    : `Signal "${name}" kept: the run receives it when it waits for it.`;
}
