import { describe, expect, it } from 'vitest';
import { isUuid, type ActiveRun, type OverlapPolicy, type RunOrigin, type SlotDecision } from '@kairos/domain';
import type { ScheduleRow } from './schedule-row.js';
import { materializeSlots, type MaterializeOptions } from './slot-materializer.js';

const t = (clock: string): number => Date.parse(`2026-03-01T${clock}:00Z`);

const ROW: ScheduleRow = {
  id: '0190a000-0000-7000-8000-000000000001',
  namespaceId: '0190a000-0000-7000-8000-0000000000aa',
  name: 'nightly',
  kind: 'every',
  cron: null,
  everyMs: 60_000,
  at: null,
  onEvent: null,
  onMatch: null,
  timezone: 'UTC',
  dstGap: 'shift',
  dstOverlap: 'first',
  catchupMode: 'latest',
  catchupWindowMs: null,
  catchupLimit: null,
  overlap: 'skip',
  target: { type: 'http', url: 'https://example.com/hook', method: 'POST', headers: {}, timeoutMs: 30_000 },
  payload: { report: 'daily' },
  retry: { maxAttempts: 4, backoff: { type: 'fixed', baseMs: 1_000, maxMs: 1_000, jitter: 0 } },
  timeoutMs: 90_000,
  concurrency: null,
  priority: 3,
  fairness: null,
  startAt: null,
  endAt: null,
  maxRuns: null,
  jitterMs: 0,
  labels: {},
  expectSucceededWithinMs: null,
  calendar: null,
  flow: null,
  lateSince: null,
  idempotencyKey: null,
  source: null,
  specHash: 'h',
  status: 'active',
  nextFireAt: new Date(t('00:01')),
  lastFireAt: null,
  fireCount: 0,
  pausedAt: null,
  resumedAt: null,
  completedAt: null,
  deletedAt: null,
  createdAt: new Date(t('00:00')),
  updatedAt: new Date(t('00:00')),
};

const fire = (clock: string, opts: { jitterMs?: number; catchup?: boolean } = {}): SlotDecision => ({
  slotMs: t(clock),
  fire: true,
  availableAtMs: t(clock) + (opts.jitterMs ?? 0),
  catchup: opts.catchup ?? false,
});
const missed = (clock: string): SlotDecision => ({ slotMs: t(clock), fire: false, reason: 'CATCHUP_NONE', reasonText: 'missed it' });

const running: ActiveRun = { id: 'run-running', state: 'running', buffered: false };
const queued: ActiveRun = { id: 'run-queued', state: 'queued', buffered: false };
const parked: ActiveRun = { id: 'run-parked', state: 'queued', buffered: true };

function materialize(slots: SlotDecision[], overlap: OverlapPolicy, active: ActiveRun[] = [], extra: Partial<MaterializeOptions> = {}) {
  const opts: MaterializeOptions = {
    row: ROW,
    slots,
    active,
    tickOrigin: 'schedule',
    runOrigin: 'schedule',
    overlap,
    actor: 'scheduler:s1',
    remainingRuns: null,
    ...extra,
  };
  return { out: materializeSlots(opts), active: opts.active };
}

/** One line per tick: "00:01 triggered TRIGGERED run#0" (run#i: the i-th run created in this pass). */
function tickLines(out: ReturnType<typeof materializeSlots>): string[] {
  return out.ticks.map((tick) => {
    const clock = tick.scheduledFor.toISOString().slice(11, 16);
    const run = tick.runId === null ? '-' : `run#${out.runs.findIndex((r) => r.id === tick.runId)}`;
    return `${clock} ${tick.outcome} ${tick.reasonCode} ${run}`;
  });
}

/** One line per run: "00:01 runnable" or "00:01 parked". */
function runLines(out: ReturnType<typeof materializeSlots>): string[] {
  return out.runs.map((r) => `${r.scheduledFor.toISOString().slice(11, 16)} ${r.availableAt === null ? 'parked' : 'runnable'}`);
}

describe('materializeSlots: the rows of one slot', () => {
  it('records a missed slot as a missed tick with its reason, and creates no run', () => {
    const { out, active } = materialize([missed('00:01')], 'skip');
    expect(out.ticks).toEqual([
      {
        scheduleId: ROW.id,
        namespaceId: ROW.namespaceId,
        scheduledFor: new Date(t('00:01')),
        origin: 'schedule',
        outcome: 'missed',
        reasonCode: 'CATCHUP_NONE',
        reasonText: 'missed it',
        runId: null,
      },
    ]);
    expect(out).toMatchObject({ runs: [], cancel: [], fired: 0, lastFiredAt: null });
    expect(active).toEqual([]);
  });

  it('turns a fired slot into a triggered tick and a runnable run copied from the schedule', () => {
    const { out, active } = materialize([fire('00:01')], 'skip');
    expect(out.runs).toHaveLength(1);
    const run = out.runs[0]!;
    expect(isUuid(run.id)).toBe(true);
    expect(run).toEqual({
      id: run.id,
      namespaceId: ROW.namespaceId,
      scheduleId: ROW.id,
      origin: 'schedule',
      sourceRunId: null,
      scheduledFor: new Date(t('00:01')),
      availableAt: new Date(t('00:01')),
      deferReason: null,
      exclusive: true,
      maxAttempts: 4,
      target: ROW.target,
      payload: { report: 'daily' },
      retry: ROW.retry,
      timeoutMs: 90_000,
      concurrency: null,
      priority: 3,
      fairness: null,
      idempotencyKey: null,
      actor: 'scheduler:s1',
      reasonCode: null,
      detail: {},
    });
    expect(out.ticks).toEqual([
      {
        scheduleId: ROW.id,
        namespaceId: ROW.namespaceId,
        scheduledFor: new Date(t('00:01')),
        origin: 'schedule',
        outcome: 'triggered',
        reasonCode: 'TRIGGERED',
        reasonText: null,
        runId: run.id,
      },
    ]);
    expect(out.fired).toBe(1);
    expect(out.lastFiredAt).toEqual(new Date(t('00:01')));
    expect(active).toEqual([{ id: run.id, state: 'queued', buffered: false }]);
  });

  it.each<[string, SlotDecision, { availableAt: number; deferReason: string | null; detail: Record<string, unknown> }]>([
    ['on time, no jitter', fire('00:01'), { availableAt: t('00:01'), deferReason: null, detail: {} }],
    ['jittered', fire('00:01', { jitterMs: 12_345 }), { availableAt: t('00:01') + 12_345, deferReason: 'jitter', detail: {} }],
    ['a catch-up slot', fire('00:01', { catchup: true }), { availableAt: t('00:01'), deferReason: null, detail: { catchup: true } }],
    ['a jittered catch-up slot', fire('00:01', { jitterMs: 5, catchup: true }), { availableAt: t('00:01') + 5, deferReason: 'jitter', detail: { catchup: true } }],
  ])('a run for %s', (_name, slot, expected) => {
    const run = materialize([slot], 'skip').out.runs[0]!;
    expect({ availableAt: run.availableAt!.getTime(), deferReason: run.deferReason, detail: run.detail }).toEqual(expected);
    expect(run.scheduledFor).toEqual(new Date(t('00:01')));
  });

  it('gives every run its own id', () => {
    const { out } = materialize([fire('00:01'), fire('00:02'), fire('00:03')], 'allow');
    expect(new Set(out.runs.map((r) => r.id)).size).toBe(3);
  });
});

describe('materializeSlots: overlap across the slots of one pass and the active runs', () => {
  it.each<[OverlapPolicy, ActiveRun[], string[], string[]]>([
    // skip: the first slot runs, the rest see it and are skipped.
    ['skip', [], ['00:01 triggered TRIGGERED run#0', '00:02 skipped OVERLAP_SKIPPED -', '00:03 skipped OVERLAP_SKIPPED -'], ['00:01 runnable']],
    ['skip', [running], ['00:01 skipped OVERLAP_SKIPPED -', '00:02 skipped OVERLAP_SKIPPED -', '00:03 skipped OVERLAP_SKIPPED -'], []],
    ['skip', [queued], ['00:01 skipped OVERLAP_SKIPPED -', '00:02 skipped OVERLAP_SKIPPED -', '00:03 skipped OVERLAP_SKIPPED -'], []],
    // allow: every slot runs.
    [
      'allow',
      [running],
      ['00:01 triggered TRIGGERED run#0', '00:02 triggered TRIGGERED run#1', '00:03 triggered TRIGGERED run#2'],
      ['00:01 runnable', '00:02 runnable', '00:03 runnable'],
    ],
    // buffer_one: one run waits, the rest are skipped.
    [
      'buffer_one',
      [],
      ['00:01 triggered TRIGGERED run#0', '00:02 triggered OVERLAP_BUFFERED run#1', '00:03 skipped OVERLAP_SKIPPED -'],
      ['00:01 runnable', '00:02 parked'],
    ],
    [
      'buffer_one',
      [running],
      ['00:01 triggered OVERLAP_BUFFERED run#0', '00:02 skipped OVERLAP_SKIPPED -', '00:03 skipped OVERLAP_SKIPPED -'],
      ['00:01 parked'],
    ],
    ['buffer_one', [running, parked], ['00:01 skipped OVERLAP_SKIPPED -', '00:02 skipped OVERLAP_SKIPPED -', '00:03 skipped OVERLAP_SKIPPED -'], []],
    // buffer_all: every slot waits in line.
    [
      'buffer_all',
      [running],
      ['00:01 triggered OVERLAP_BUFFERED run#0', '00:02 triggered OVERLAP_BUFFERED run#1', '00:03 triggered OVERLAP_BUFFERED run#2'],
      ['00:01 parked', '00:02 parked', '00:03 parked'],
    ],
    [
      'buffer_all',
      [],
      ['00:01 triggered TRIGGERED run#0', '00:02 triggered OVERLAP_BUFFERED run#1', '00:03 triggered OVERLAP_BUFFERED run#2'],
      ['00:01 runnable', '00:02 parked', '00:03 parked'],
    ],
  ])('%s with active %j', (policy, active, ticks, runs) => {
    const { out } = materialize([fire('00:01'), fire('00:02'), fire('00:03')], policy, [...active]);
    expect(tickLines(out)).toEqual(ticks);
    expect(runLines(out)).toEqual(runs);
    expect(out.fired).toBe(runs.length);
    expect(out.cancel).toEqual([]);
  });

  it('marks a parked run: no availableAt, OVERLAP_BUFFERED, a deferReason naming the run it waits for', () => {
    const { out, active } = materialize([fire('00:01', { jitterMs: 500 })], 'buffer_one', [running]);
    expect(out.runs[0]).toMatchObject({
      availableAt: null,
      deferReason: 'waiting for run run-running to end (overlap buffer_one)',
      reasonCode: 'OVERLAP_BUFFERED',
      exclusive: true,
    });
    expect(active).toEqual([running, { id: out.runs[0]!.id, state: 'queued', buffered: true }]);
  });

  it('lines buffer_all runs up, each waiting for the one before it', () => {
    const { out } = materialize([fire('00:01'), fire('00:02')], 'buffer_all', [running]);
    expect(out.runs.map((r) => r.deferReason)).toEqual([
      'waiting for run run-running to end (overlap buffer_all)',
      `waiting for run ${out.runs[0]!.id} to end (overlap buffer_all)`,
    ]);
  });

  it('explains a skipped tick with the run that blocked it', () => {
    const { out } = materialize([fire('00:01')], 'skip', [running]);
    expect(out.ticks[0]).toMatchObject({ outcome: 'skipped', reasonCode: 'OVERLAP_SKIPPED', reasonText: 'run run-running was still active (overlap skip)', runId: null });
  });

  it('runs allow-policy runs non-exclusively', () => {
    const { out, active } = materialize([fire('00:01')], 'allow', [running]);
    expect(out.runs[0]).toMatchObject({ exclusive: false, availableAt: new Date(t('00:01')), deferReason: null });
    expect(active).toHaveLength(2);
  });

  it('does not count skipped slots as fired', () => {
    const { out } = materialize([fire('00:01'), fire('00:02')], 'skip');
    expect(out.fired).toBe(1);
    expect(out.lastFiredAt).toEqual(new Date(t('00:01')));
  });

  it('counts a parked run as fired', () => {
    const { out } = materialize([fire('00:01'), fire('00:02')], 'buffer_one');
    expect(out.fired).toBe(2);
    expect(out.lastFiredAt).toEqual(new Date(t('00:02')));
  });

  it('keeps missed and fired slots in slot order', () => {
    const { out } = materialize([missed('00:01'), fire('00:02'), missed('00:03'), fire('00:04')], 'allow');
    expect(tickLines(out)).toEqual([
      '00:01 missed CATCHUP_NONE -',
      '00:02 triggered TRIGGERED run#0',
      '00:03 missed CATCHUP_NONE -',
      '00:04 triggered TRIGGERED run#1',
    ]);
    expect(out.lastFiredAt).toEqual(new Date(t('00:04')));
  });

  it('records nothing and changes nothing for no slots', () => {
    const active = [running];
    expect(
      materializeSlots({ row: ROW, slots: [], active, tickOrigin: 'schedule', runOrigin: 'schedule', overlap: 'replace', actor: 'a', remainingRuns: null }),
    ).toEqual({
      ticks: [],
      runs: [],
      cancel: [],
      cancelReasonText: 'a newer slot replaced this run (overlap replace)',
      fired: 0,
      exhausted: false,
      lastFiredAt: null,
    });
    expect(active).toEqual([running]);
  });
});

describe('materializeSlots: replace', () => {
  it.each<[RunOrigin, string]>([
    ['schedule', 'a newer slot replaced this run (overlap replace)'],
    ['backfill', 'a newer run of the schedule replaced this run (overlap replace)'],
    ['manual', 'a newer run of the schedule replaced this run (overlap replace)'],
  ])('gives the runs a %s run replaces the reason text "%s"', (runOrigin, text) => {
    const out = materializeSlots({ row: ROW, slots: [], active: [], tickOrigin: null, runOrigin, overlap: 'replace', actor: 'a', remainingRuns: null });
    expect(out.cancelReasonText).toBe(text);
  });

  it('cancels a queued run outright and runs the new one at once', () => {
    const { out, active } = materialize([fire('00:01')], 'replace', [queued]);
    expect(out.cancel).toEqual(['run-queued']);
    expect(runLines(out)).toEqual(['00:01 runnable']);
    expect(out.runs[0]!.exclusive).toBe(true);
    expect(active).toEqual([{ id: out.runs[0]!.id, state: 'queued', buffered: false }]);
  });

  it('asks a running run to stop and parks the new one behind it', () => {
    const { out, active } = materialize([fire('00:01')], 'replace', [running]);
    expect(out.cancel).toEqual(['run-running']);
    expect(out.runs[0]).toMatchObject({ availableAt: null, reasonCode: 'OVERLAP_BUFFERED', deferReason: 'waiting for run run-running to end (overlap replace)' });
    expect(tickLines(out)).toEqual(['00:01 triggered OVERLAP_BUFFERED run#0']);
    // The running run stays active until its holder stops it.
    expect(active).toEqual([running, { id: out.runs[0]!.id, state: 'queued', buffered: true }]);
  });

  it('cancels a running and a parked run, and waits for the running one', () => {
    const { out, active } = materialize([fire('00:01')], 'replace', [running, parked]);
    expect(out.cancel).toEqual(['run-running', 'run-parked']);
    expect(runLines(out)).toEqual(['00:01 parked']);
    expect(active.map((r) => r.id)).toEqual(['run-running', out.runs[0]!.id]);
  });

  it('with several slots in one pass, the newest replaces the older new ones and still waits for the running run', () => {
    const { out, active } = materialize([fire('00:01'), fire('00:02'), fire('00:03')], 'replace', [running]);
    const [first, second, third] = out.runs;
    expect(runLines(out)).toEqual(['00:01 parked', '00:02 parked', '00:03 parked']);
    expect(out.cancel).toEqual(['run-running', first!.id, second!.id]);
    expect(third!.deferReason).toBe('waiting for run run-running to end (overlap replace)');
    expect(active).toEqual([running, { id: third!.id, state: 'queued', buffered: true }]);
  });

  it('with several slots and nothing running, each new run replaces the previous one', () => {
    const { out, active } = materialize([fire('00:01'), fire('00:02')], 'replace', [queued]);
    expect(runLines(out)).toEqual(['00:01 runnable', '00:02 runnable']);
    expect(out.cancel).toEqual(['run-queued', out.runs[0]!.id]);
    expect(active).toEqual([{ id: out.runs[1]!.id, state: 'queued', buffered: false }]);
  });
});

describe('materializeSlots: origins', () => {
  it('writes no ticks for a manual trigger (tickOrigin null), but still creates the runs', () => {
    const { out } = materialize([fire('00:01'), fire('00:02'), missed('00:03')], 'skip', [], { tickOrigin: null, runOrigin: 'manual', actor: 'api:key-1' });
    expect(out.ticks).toEqual([]);
    expect(out.runs).toHaveLength(1);
    expect(out.runs[0]).toMatchObject({ origin: 'manual', actor: 'api:key-1', scheduledFor: new Date(t('00:01')) });
    expect(out.fired).toBe(1);
  });

  it('applies an overlap override given by the caller, not the schedule row', () => {
    const { out } = materialize([fire('00:01')], 'allow', [running], { tickOrigin: null, runOrigin: 'manual' });
    expect(ROW.overlap).toBe('skip');
    expect(out.runs).toHaveLength(1);
  });

  it('stamps backfill ticks and runs with their origin', () => {
    const { out } = materialize([fire('00:01'), missed('00:02')], 'allow', [], { tickOrigin: 'backfill', runOrigin: 'backfill' });
    expect(out.ticks.map((tick) => tick.origin)).toEqual(['backfill', 'backfill']);
    expect(out.runs.map((r) => r.origin)).toEqual(['backfill']);
  });

  it('uses the payload of the row it is given (a trigger may override it)', () => {
    const { out } = materialize([fire('00:01')], 'skip', [], { row: { ...ROW, payload: { override: true } } });
    expect(out.runs[0]!.payload).toEqual({ override: true });
  });
});

describe('materializeSlots: maxRuns counts runs created', () => {
  it.each<[string, OverlapPolicy, ActiveRun[], number, string[], boolean]>([
    ['stops after the last run it may create; later slots stay unrecorded', 'allow', [], 2, ['00:01 triggered TRIGGERED run#0', '00:02 triggered TRIGGERED run#1'], true],
    ['has room to spare', 'allow', [], 5, ['00:01 triggered TRIGGERED run#0', '00:02 triggered TRIGGERED run#1', '00:03 triggered TRIGGERED run#2'], false],
    [
      'a slot skipped by overlap does not use up a run',
      'skip',
      [running],
      1,
      ['00:01 skipped OVERLAP_SKIPPED -', '00:02 skipped OVERLAP_SKIPPED -', '00:03 skipped OVERLAP_SKIPPED -'],
      false,
    ],
    ['nothing left: records nothing', 'allow', [], 0, [], true],
  ])('%s', (_name, overlap, active, remainingRuns, ticks, exhausted) => {
    const { out } = materialize([fire('00:01'), fire('00:02'), fire('00:03')], overlap, [...active], { remainingRuns });
    expect(tickLines(out)).toEqual(ticks);
    expect(out.exhausted).toBe(exhausted);
    expect(out.fired).toBe(ticks.filter((line) => line.includes('triggered')).length);
  });
});
