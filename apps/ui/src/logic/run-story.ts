/** A run's story as rows for a timeline: each event with its transition, reason, epoch and the time since the run was created. */
import { eventWaitWords } from './events.js';

/** A run's state, as the wire sends it (see data/wire/shared.ts). */
type RunState = 'queued' | 'running' | 'sleeping' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'dead';

export interface RunEvent {
  id: number;
  at: string;
  kind:
    | 'queued'
    | 'enqueued'
    | 'claimed'
    | 'renewed'
    | 'succeeded'
    | 'failed'
    | 'retry_scheduled'
    | 'dead'
    | 'cancel_requested'
    | 'cancelled'
    | 'lease_lost'
    | 'reaped'
    | 'poisoned'
    | 'released'
    | 'drained'
    | 'handed_back'
    | 'started'
    | 'skipped'
    | 'slept'
    | 'awaiting_signal'
    | 'signalled'
    | 'awaiting_event'
    | 'event_received'
    | 'event_gathered'
    | 'held'
    | 'version_moved'
    | 'upgraded';
  fromState: RunState | null;
  toState: RunState | null;
  leaseEpoch: number | null;
  actor: string;
  reasonCode: string | null;
  /** What the event adds: an error, an HTTP response, the event awaited (`{ event, match, timeoutAt }`) or received, or gathered into the run (`{ eventId, control }`), a version left and taken (`{ from, to }`). */
  detail: Record<string, unknown>;
}

export interface StoryRow {
  id: number;
  at: string;
  kind: string;
  /** The kind in words where the kind alone does not say it: what an event wait waits for, which event it received; else empty. */
  words: string;
  /** `queued → running`, or empty for an event that changed no state (a renewal). */
  transition: string;
  reason: string;
  epoch: string;
  actor: string;
  /** `+1.2 s` after the first event. */
  sinceStart: string;
}

export function runStory(events: readonly RunEvent[]): StoryRow[] {
  const sorted = [...events].sort((a, b) => a.id - b.id);
  const start = sorted[0] ? Date.parse(sorted[0].at) : 0;
  return sorted.map((event) => ({
    id: event.id,
    at: event.at,
    kind: event.kind,
    words: event.kind === 'event_gathered' ? gatheredWords(event.detail) : event.kind === 'version_moved' || event.kind === 'upgraded' ? versionWords(event.kind, event.detail) : eventWaitWords(event),
    transition: transitionOf(event.fromState, event.toState),
    reason: event.reasonCode ?? '',
    epoch: event.leaseEpoch === null ? '' : String(event.leaseEpoch),
    actor: event.actor,
    sinceStart: `+${formatElapsed(Date.parse(event.at) - start)}`,
  }));
}

/** An event a debounce or batch window gathered into the run: `gathered event <id> into its batch`. */
export function gatheredWords(detail: Record<string, unknown> | undefined): string {
  const id = typeof detail?.eventId === 'string' ? detail.eventId : null;
  const what = id === null ? 'an event' : `event ${id}`;
  if (detail?.control === 'debounce') return `gathered ${what} (debounce: the run now carries it, the last event)`;
  if (detail?.control === 'batch') return `gathered ${what} into its batch`;
  return `gathered ${what}`;
}

/** A run moved to another version of the code through the API, or taken over by a worker started with upgrade "auto". */
export function versionWords(kind: 'version_moved' | 'upgraded', detail: Record<string, unknown> | undefined): string {
  const named = (version: unknown): string => (typeof version === 'string' ? `version ${version}` : 'any version');
  const moved = `from ${named(detail?.from)} to ${named(detail?.to)}`;
  return kind === 'version_moved' ? `moved ${moved}` : `taken over ${moved} by an upgrade "auto" worker`;
}

function transitionOf(from: string | null, to: string | null): string {
  if (to === null || from === to) return '';
  return from === null ? to : `${from} → ${to}`;
}

/** How long between two instants, in words a person scans: `850 ms`, `4.2 s`, `3 min 5 s`, `2 h 10 min`; empty while `end` is missing. */
export function durationBetween(start: string | null, end: string | null): string {
  if (start === null || end === null) return '';
  return formatElapsed(Date.parse(end) - Date.parse(start));
}

export function formatElapsed(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const totalSeconds = Math.floor(ms / 1_000);
  if (totalSeconds < 3_600) return `${Math.floor(totalSeconds / 60)} min ${totalSeconds % 60} s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 24 * 60) return `${Math.floor(totalMinutes / 60)} h ${totalMinutes % 60} min`;
  return `${Math.floor(totalMinutes / 1_440)} d ${Math.floor((totalMinutes % 1_440) / 60)} h`;
}
