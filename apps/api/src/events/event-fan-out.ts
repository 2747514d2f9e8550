/**
 * What one transaction's events make of the schedules listening to them: for each (event,
 * schedule) pair, a new run, an event joining the open debounce or batch window of its key, or a
 * skip with its reason. Decided in memory against what the ledger held for the schedules (locked
 * by the caller: their active runs, flow marks and open windows), in the order the events came, so
 * the events of one batch see each other as later requests would.
 */
import {
  debouncedDue,
  flowKeyOf,
  isObject,
  isStepsTarget,
  queueOf,
  rateLimitAdmits,
  throttledStart,
  type ActiveRun,
  type DispatchItem,
  type FlowControl,
  type JsonObject,
  type JsonValue,
  type ReasonCode,
} from '@kairos/domain';
import { eventBody, materializeSlots, type EventRow, type FlowMark, type GatheredRun, type Materialized, type MarkKind, type OpenWindow, type ScheduleRow, type WindowKind } from '@kairos/ledger';

interface Window {
  scheduleId: string;
  kind: WindowKind;
  key: string;
  runId: string;
  openedAtMs: number;
  events: number;
  payload: JsonObject;
  availableAtMs: number;
  eventId: string;
  deferReason: string | null;
  /** Written before this transaction (an UPDATE), or made in it (part of `made`). */
  existing: boolean;
  /** The run made in this transaction, when it is. */
  made: Materialized | null;
  gathered: GatheredRun['gathered'];
  /** Full: closed, and handed to the transport now. */
  full: boolean;
  /** The transport queue its run travels on (a steps run never does: its steps do). */
  queue: string | null;
}

export type PairOutcome = { runId: string } | { skipped: ReasonCode };

export class EventFanOut {
  readonly made: Materialized[] = [];
  readonly marks: FlowMark[] = [];
  private readonly marksByKey = new Map<string, number[]>();
  private readonly windows = new Map<string, Window>();
  private readonly touched: Window[] = [];

  constructor(
    private readonly nowMs: number,
    private readonly actor: string,
    private readonly active: Map<string, ActiveRun[]>,
    marks: readonly FlowMark[],
    open: readonly OpenWindow[],
  ) {
    for (const mark of marks) this.marksOf(mark.scheduleId, mark.kind, mark.key).push(mark.at.getTime());
    for (const w of open) {
      const window: Window = {
        scheduleId: w.scheduleId,
        kind: w.kind,
        key: w.key,
        runId: w.runId,
        openedAtMs: w.openedAt.getTime(),
        events: w.events,
        payload: isObject(w.payload) ? (w.payload as JsonObject) : {},
        availableAtMs: 0,
        eventId: '',
        deferReason: null,
        existing: true,
        made: null,
        gathered: [],
        full: false,
        queue: null,
      };
      this.windows.set(windowKey(w.scheduleId, w.kind, w.key), window);
    }
  }

  /** What `event` makes of `schedule`. */
  apply(schedule: ScheduleRow, event: EventRow): PairOutcome {
    if (schedule.status === 'paused') return { skipped: 'SCHEDULE_PAUSED' };
    const body = eventBody(event);
    const base = isObject(schedule.payload) ? (schedule.payload as JsonObject) : {};
    const payload = { ...base, event: body } as JsonObject;
    const flow = schedule.flow;
    if (flow === null) return this.newRun(schedule, event, payload, this.nowMs, null, schedule.overlap);
    const keys = keysOf(flow, payload);
    if (keys === null) return { skipped: 'FLOW_KEY_UNRESOLVED' };
    const gatherKind: WindowKind | null = flow.debounce ? 'debounce' : flow.batch ? 'batch' : null;
    if (gatherKind !== null) {
      const open = this.windows.get(windowKey(schedule.id, gatherKind, keys[gatherKind]!));
      if (open && !open.full) {
        open.queue = isStepsTarget(schedule.target) ? null : queueOf(schedule.target);
        return { runId: this.join(open, flow, event, base, body) };
      }
    }
    if (flow.rateLimit) {
      // An event stored while this one waited for the schedule's lock may have been received after
      // it (its transaction began later): its run counts in this one's window all the same.
      const made = this.marksOf(schedule.id, 'rate', keys.rateLimit!).map((at) => Math.min(at, this.nowMs));
      if (!rateLimitAdmits(flow.rateLimit, made, this.nowMs)) return { skipped: 'RATE_LIMITED' };
    }
    // A controlled schedule's runs are spaced by its controls, not its overlap policy: every event
    // of a throttle or batch must get its run, and a window's run is itself active.
    let outcome: PairOutcome;
    if (flow.debounce) {
      outcome = this.newRun(schedule, event, payload, debouncedDue(flow.debounce, this.nowMs, this.nowMs), 'DEBOUNCED', 'allow');
    } else if (flow.batch) {
      const full = flow.batch.maxSize === 1;
      outcome = this.newRun(schedule, event, { ...base, events: [body] }, full ? this.nowMs : this.nowMs + flow.batch.timeoutMs, full ? null : 'BATCHING', 'allow');
    } else if (flow.throttle) {
      const planned = this.marksOf(schedule.id, 'throttle', keys.throttle!);
      const startMs = throttledStart(flow.throttle, planned, this.nowMs);
      outcome = this.newRun(schedule, event, payload, startMs, startMs > this.nowMs ? 'THROTTLED' : null, 'allow');
      if ('runId' in outcome) {
        this.mark(schedule.id, 'throttle', keys.throttle!, startMs, outcome.runId);
        // The claim holds the run to the throttle with the starts as they happen.
        this.made[this.made.length - 1]!.runs[0]!.throttle = { key: `${schedule.id}/${keys.throttle!}`, limit: flow.throttle.limit, periodMs: flow.throttle.periodMs };
      }
    } else {
      outcome = this.newRun(schedule, event, payload, this.nowMs, null, schedule.overlap);
    }
    if (!('runId' in outcome)) return outcome;
    if (flow.rateLimit) this.mark(schedule.id, 'rate', keys.rateLimit!, this.nowMs, outcome.runId);
    if (gatherKind !== null && !(flow.batch?.maxSize === 1)) this.openWindow(schedule, gatherKind, keys[gatherKind]!, event, outcome.runId);
    return outcome;
  }

  /** The runs of windows made before this transaction that its events changed. */
  gatheredExisting(): GatheredRun[] {
    return this.touched.filter((w) => w.existing).map(gatheredRunOf);
  }

  /** The runs made in this transaction that later events of it joined. */
  gatheredNew(): GatheredRun[] {
    return this.touched.filter((w) => !w.existing).map(gatheredRunOf);
  }

  /** Windows to record as open (a new one, or one that gathered more), and the runs whose window closed. */
  windowChanges(): { open: { scheduleId: string; kind: WindowKind; key: string; runId: string; openedAt: Date; events: number }[]; closed: string[] } {
    const all = [...this.windows.values()];
    return {
      open: all
        .filter((w) => !w.full && (!w.existing || w.gathered.length > 0))
        .map((w) => ({ scheduleId: w.scheduleId, kind: w.kind, key: w.key, runId: w.runId, openedAt: new Date(w.openedAtMs), events: w.events })),
      closed: all.filter((w) => w.full).map((w) => w.runId),
    };
  }

  /** The runs of windows made before this transaction that an event filled: due now, their delayed jobs to wake. */
  fullExisting(): DispatchItem[] {
    return this.touched
      .filter((w) => w.existing && w.full && w.queue !== null)
      .map((w) => ({ id: w.runId, availableAt: new Date(w.availableAtMs), queue: w.queue! }));
  }

  private join(window: Window, flow: FlowControl, event: EventRow, base: JsonObject, body: ReturnType<typeof eventBody>): string {
    window.events += 1;
    window.gathered.push({ eventId: event.id, control: window.kind });
    if (!this.touched.includes(window)) this.touched.push(window);
    if (window.kind === 'debounce') {
      // The last event wins.
      window.payload = { ...base, event: body } as JsonObject;
      window.eventId = event.id;
      window.availableAtMs = debouncedDue(flow.debounce!, window.openedAtMs, this.nowMs);
      window.deferReason = 'DEBOUNCED';
    } else {
      const events = Array.isArray(window.payload.events) ? window.payload.events : [];
      window.payload = { ...window.payload, events: [...events, body as unknown as JsonValue] };
      if (window.events >= flow.batch!.maxSize) {
        window.full = true;
        window.availableAtMs = this.nowMs;
        window.deferReason = null;
      } else if (window.availableAtMs === 0) {
        window.availableAtMs = window.openedAtMs + flow.batch!.timeoutMs;
        window.deferReason = 'BATCHING';
      }
    }
    const made = window.made?.runs[0];
    if (made) {
      made.payload = window.payload as JsonValue;
      made.availableAt = new Date(window.availableAtMs);
      made.deferReason = window.deferReason;
      made.eventId = window.eventId || made.eventId;
    }
    return window.runId;
  }

  private openWindow(schedule: ScheduleRow, kind: WindowKind, key: string, event: EventRow, runId: string): void {
    const made = this.made[this.made.length - 1]!;
    const run = made.runs[0]!;
    this.windows.set(windowKey(schedule.id, kind, key), {
      scheduleId: schedule.id,
      kind,
      key,
      runId,
      openedAtMs: this.nowMs,
      events: 1,
      payload: run.payload as JsonObject,
      availableAtMs: run.availableAt!.getTime(),
      eventId: event.id,
      deferReason: run.deferReason,
      existing: false,
      made,
      gathered: [],
      full: false,
      queue: null,
    });
  }

  private newRun(schedule: ScheduleRow, event: EventRow, payload: JsonObject, availableAtMs: number, deferReason: string | null, overlap: ScheduleRow['overlap']): PairOutcome {
    if (schedule.concurrency && flowKeyOf(schedule.concurrency.key, payload as JsonValue) === null) return { skipped: 'CONCURRENCY_KEY_UNRESOLVED' };
    const active = this.active.get(schedule.id) ?? [];
    this.active.set(schedule.id, active);
    const made = materializeSlots({
      row: { ...schedule, payload: payload as JsonValue },
      slots: [{ slotMs: this.nowMs, fire: true, availableAtMs, catchup: false }],
      active,
      tickOrigin: null,
      runOrigin: 'event',
      overlap,
      actor: this.actor,
      remainingRuns: null,
    });
    const run = made.runs[0];
    if (!run) return { skipped: 'OVERLAP_SKIPPED' };
    run.eventId = event.id;
    // A buffered run keeps its overlap reason; a run a control holds back says which.
    if (run.availableAt !== null) run.deferReason = deferReason;
    this.made.push(made);
    return { runId: run.id };
  }

  private mark(scheduleId: string, kind: MarkKind, key: string, atMs: number, runId: string): void {
    this.marksOf(scheduleId, kind, key).push(atMs);
    this.marks.push({ scheduleId, kind, key, at: new Date(atMs), runId });
  }

  private marksOf(scheduleId: string, kind: MarkKind, key: string): number[] {
    const id = `${scheduleId}|${kind}|${key}`;
    let list = this.marksByKey.get(id);
    if (!list) this.marksByKey.set(id, (list = []));
    return list;
  }
}

function windowKey(scheduleId: string, kind: WindowKind, key: string): string {
  return `${scheduleId}|${kind}|${key}`;
}

/** Each declared control's key for this payload; null when one cannot be resolved. */
function keysOf(flow: FlowControl, payload: JsonObject): Partial<Record<keyof FlowControl, string>> | null {
  const keys: Partial<Record<keyof FlowControl, string>> = {};
  for (const name of ['debounce', 'throttle', 'rateLimit', 'batch'] as const) {
    const spec = flow[name];
    if (!spec) continue;
    const key = flowKeyOf(spec.key, payload as JsonValue);
    if (key === null) return null;
    keys[name] = key;
  }
  return keys;
}

function gatheredRunOf(w: Window): GatheredRun {
  return { runId: w.runId, payload: w.payload as JsonValue, availableAt: new Date(w.availableAtMs), eventId: w.eventId, deferReason: w.deferReason, gathered: w.gathered };
}

/** The longest window any of these schedules' controls looks back over. */
export function flowHorizonMs(schedules: readonly ScheduleRow[]): number {
  let horizon = 0;
  for (const s of schedules) {
    for (const spec of [s.flow?.throttle, s.flow?.rateLimit]) if (spec) horizon = Math.max(horizon, spec.periodMs);
  }
  return horizon;
}

/** The mark windows to prune after a transaction: each controlled schedule's rate and throttle periods. */
export function markPeriods(schedules: readonly ScheduleRow[]): { scheduleId: string; kind: MarkKind; periodMs: number }[] {
  return schedules.flatMap((s) => [
    ...(s.flow?.rateLimit ? [{ scheduleId: s.id, kind: 'rate' as const, periodMs: s.flow.rateLimit.periodMs }] : []),
    ...(s.flow?.throttle ? [{ scheduleId: s.id, kind: 'throttle' as const, periodMs: s.flow.throttle.periodMs }] : []),
  ]);
}
