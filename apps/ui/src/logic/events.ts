/**
 * Events in words: what starts a schedule (`on`), what a durable function waits for
 * (ctx.waitForEvent, read from its `awaiting_event` run event), what a run event of an event wait
 * says, the counts of an event's runs, skips and resumes, and the command that sends one.
 */
// No import of data/wire: its runs module imports run-story, which imports this module.

/** `{ "data.plan": "pro", "data.qty": 2 }` → `data.plan = "pro" and data.qty = 2`; empty for no entries. */
export function matchInWords(match: Readonly<Record<string, unknown>> | null | undefined): string {
  const entries = Object.entries(match ?? {});
  return entries.map(([path, value]) => `${path} = ${JSON.stringify(value) ?? 'null'}`).join(' and ');
}

/** An event name and its match: `order.paid where data.plan = "pro"`, or the name alone when every event of it matches. */
export function eventFilterInWords(name: string, match: Readonly<Record<string, unknown>> | null | undefined): string {
  const where = matchInWords(match);
  return where === '' ? name : `${name} where ${where}`;
}

/** A schedule's `on`: `runs on each event order.paid where data.plan = "pro"`. */
export function triggerInWords(on: { event: string; match: Readonly<Record<string, unknown>> | null }): string {
  return `runs on each event ${eventFilterInWords(on.event, on.match)}`;
}

/** What a durable function waits for: the event's name, the values it must match, and the instant the wait times out (null: never). */
export interface AwaitedEvent {
  event: string;
  match: Record<string, unknown>;
  timeoutAt: string | null;
}

/** The detail of an `awaiting_event` run event (`{ event, match, timeoutAt }`), or null when it is not one. */
export function awaitedEventOf(detail: Readonly<Record<string, unknown>> | null | undefined): AwaitedEvent | null {
  if (detail === null || detail === undefined || typeof detail.event !== 'string') return null;
  const match = detail.match !== null && typeof detail.match === 'object' && !Array.isArray(detail.match) ? (detail.match as Record<string, unknown>) : {};
  return { event: detail.event, match, timeoutAt: typeof detail.timeoutAt === 'string' ? detail.timeoutAt : null };
}

/**
 * What a waiting run waits for: while its newest event checkpoint is open, the detail of its newest
 * `awaiting_event` run event; null for a run not waiting for an event (or whose events are not read yet).
 */
export function awaitedEvent(
  run: { state: string; checkpoints: readonly { kind: string; state: string }[] },
  events: readonly { id: number; kind: string; detail?: Record<string, unknown> }[],
): AwaitedEvent | null {
  if (run.state !== 'waiting') return null;
  const open = run.checkpoints.filter((c) => c.kind === 'event').at(-1);
  if (open === undefined || open.state !== 'waiting') return null;
  const newest = [...events].filter((e) => e.kind === 'awaiting_event').sort((a, b) => a.id - b.id).at(-1);
  return newest === undefined ? null : awaitedEventOf(newest.detail);
}

/** An instant as the dashboard prints them (UTC, to the second): the ledger writes a wait's timeout as Postgres does, `2026-12-01T09:00:00.5+00:00`. */
function instant(at: string): string {
  const ms = Date.parse(at);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : at;
}

/** `waits for event order.paid where data.orderId = "o-1", until 2026-12-01 09:00:00Z`, or `…, with no timeout`. */
export function awaitInWords(awaited: AwaitedEvent): string {
  const until = awaited.timeoutAt === null ? 'with no timeout' : `until ${instant(awaited.timeoutAt)}`;
  return `waits for event ${eventFilterInWords(awaited.event, awaited.match)}, ${until}`;
}

/** The words of a run event of an event wait: what `awaiting_event` waits for, which event `event_received` brought; empty for any other kind. */
export function eventWaitWords(event: { kind: string; detail?: Record<string, unknown> }): string {
  if (event.kind === 'awaiting_event') {
    const awaited = awaitedEventOf(event.detail);
    return awaited === null ? 'waits for an event' : awaitInWords(awaited);
  }
  if (event.kind === 'event_received') {
    const detail = event.detail ?? {};
    const id = typeof detail.eventId === 'string' ? detail.eventId : typeof detail.id === 'string' ? detail.id : null;
    const name = typeof detail.event === 'string' ? detail.event : typeof detail.name === 'string' ? detail.name : null;
    const what = name === null ? (id ?? '') : id === null ? name : `${name} (${id})`;
    return what === '' ? 'received the event it waited for' : `received event ${what}`;
  }
  return '';
}

/** `1 run`, `2 runs`, `no run`. */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return n === 0 ? `no ${one}` : `${n} ${n === 1 ? one : many}`;
}

/** What an event did: `started 2 runs, skipped 1 schedule, resumed no wait`. */
export function outcomeInWords(event: { runs: readonly unknown[]; skipped: readonly unknown[]; resumed: readonly unknown[] }): string {
  return `started ${countOf(event.runs.length, 'run')}, skipped ${countOf(event.skipped.length, 'schedule')}, resumed ${countOf(event.resumed.length, 'wait')}`;
}

/** Why a matching schedule made no run for an event, in words. */
export const SKIP_WORDS: Record<string, string> = {
  SCHEDULE_PAUSED: 'the schedule was paused',
  OVERLAP_SKIPPED: 'a run of it was still active (overlap skip)',
  RATE_LIMITED: 'its rate limit made as many runs for the key as its window allows',
  FLOW_KEY_UNRESOLVED: 'its debounce, throttle, rate limit or batch key names a field the event lacks',
  CONCURRENCY_KEY_UNRESOLVED: 'its concurrency key names a field the event lacks',
};

export function skipInWords(reasonCode: string): string {
  return SKIP_WORDS[reasonCode] ?? reasonCode;
}

/** The command that sends an event to this API (`origin` as the page sees it), for the empty states. */
export function sendEventCommand(origin: string, name = 'order.paid', data: unknown = { plan: 'pro' }): string {
  const body = JSON.stringify({ name, data });
  return `curl -s -XPOST ${origin}/v1/events -H 'content-type: application/json' -H "Authorization: Bearer $KAIROS_API_KEY" -d '${body}'`;
}
