import { describe, expect, it } from 'vitest';
import { parseCron, type Recurrence } from './time/index.js';
import type { ScheduleSpec } from './schedule-spec.js';
import { slotsInRange, type SlotRange } from './slot-range.js';

/** Instants on 2026-03-01 (UTC): "00:07". */
const t = (clock: string): number => Date.parse(`2026-03-01T${clock}:00Z`);
const MINUTE = 60_000;

/** The bounds are all slotsInRange reads from a spec. */
function bounds(startAt: string | null, endAt: string | null): ScheduleSpec {
  return { startAtMs: startAt === null ? null : t(startAt), endAtMs: endAt === null ? null : t(endAt) } as ScheduleSpec;
}

/** Every 15 minutes from 00:00. */
const QUARTERS: Recurrence = { kind: 'every', everyMs: 15 * MINUTE, anchorMs: t('00:00') };
const clocks = (slots: number[]): string[] => slots.map((s) => new Date(s).toISOString().slice(11, 16));

describe('slotsInRange', () => {
  it.each<[string, ScheduleSpec, Omit<SlotRange, 'keep'>, string[], boolean]>([
    ['the slots in (after, until], ascending', bounds(null, null), { afterMs: t('00:00'), untilMs: t('01:00'), limit: 10 }, ['00:15', '00:30', '00:45', '01:00'], false],
    ['a slot at `after` is excluded, one at `until` included', bounds(null, null), { afterMs: t('00:15'), untilMs: t('00:45'), limit: 10 }, ['00:30', '00:45'], false],
    ['an empty range', bounds(null, null), { afterMs: t('00:16'), untilMs: t('00:29'), limit: 10 }, [], false],
    ['no slot before startAt exists', bounds('00:40', null), { afterMs: t('00:00'), untilMs: t('01:00'), limit: 10 }, ['00:45', '01:00'], false],
    ['startAt itself is a slot', bounds('00:30', null), { afterMs: t('00:00'), untilMs: t('00:45'), limit: 10 }, ['00:30', '00:45'], false],
    ['no slot after endAt', bounds(null, '00:40'), { afterMs: t('00:00'), untilMs: t('01:00'), limit: 10 }, ['00:15', '00:30'], false],
    ['endAt itself is a slot', bounds(null, '00:45'), { afterMs: t('00:00'), untilMs: t('01:00'), limit: 10 }, ['00:15', '00:30', '00:45'], false],
    ['exactly `limit` slots: nothing more', bounds(null, null), { afterMs: t('00:00'), untilMs: t('00:30'), limit: 2 }, ['00:15', '00:30'], false],
    ['a limit of zero keeps none', bounds(null, null), { afterMs: t('00:00'), untilMs: t('00:30'), limit: 0 }, [], true],
  ])('%s', (_name, spec, range, expected, more) => {
    for (const keep of ['oldest', 'newest'] as const) {
      expect(slotsInRange(spec, QUARTERS, { ...range, keep })).toEqual({ slots: expected.map(t), more });
    }
  });

  it.each<[SlotRange['keep'], string[]]>([
    ['oldest', ['00:15', '00:30']],
    ['newest', ['00:45', '01:00']],
  ])('past the limit, keeps the %s slots and says there are more', (keep, expected) => {
    const out = slotsInRange(bounds(null, null), QUARTERS, { afterMs: t('00:00'), untilMs: t('01:00'), limit: 2, keep });
    expect({ slots: clocks(out.slots), more: out.more }).toEqual({ slots: expected, more: true });
  });

  it('walks without an end when keeping the oldest, stopping at the limit or at endAt', () => {
    expect(clocks(slotsInRange(bounds(null, null), QUARTERS, { afterMs: t('00:50'), limit: 3, keep: 'oldest' }).slots)).toEqual(['01:00', '01:15', '01:30']);
    expect(slotsInRange(bounds(null, '01:10'), QUARTERS, { afterMs: t('00:50'), limit: 3, keep: 'oldest' })).toEqual({ slots: [t('01:00')], more: false });
  });

  it('refuses to keep the newest slots of a range without an end', () => {
    expect(() => slotsInRange(bounds(null, null), QUARTERS, { afterMs: 0, limit: 1, keep: 'newest' })).toThrow(RangeError);
  });

  it('costs `limit` steps for the newest slots of a range far longer than the limit', () => {
    const everySecond: Recurrence = { kind: 'every', everyMs: 1_000, anchorMs: 0 };
    const until = Date.parse('2026-03-01T00:00:00Z');
    const out = slotsInRange(bounds(null, null), everySecond, { afterMs: -1, untilMs: until, limit: 3, keep: 'newest' });
    expect(out).toEqual({ slots: [until - 2_000, until - 1_000, until], more: true });
  });

  it('walks both ways through a DST fall-back alike (cron, both occurrences fired)', () => {
    const rec: Recurrence = { kind: 'cron', cron: parseCron('30 1 * * *'), timezone: 'America/New_York', dst: { gap: 'shift', overlap: 'both' } };
    const range = { afterMs: Date.parse('2026-10-31T00:00:00Z'), untilMs: Date.parse('2026-11-03T00:00:00Z'), limit: 10 };
    const expected = ['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-02T06:30:00.000Z', '2026-10-31T05:30:00.000Z'].sort();
    for (const keep of ['oldest', 'newest'] as const) {
      expect(slotsInRange(bounds(null, null), rec, { ...range, keep }).slots.map((s) => new Date(s).toISOString())).toEqual(expected);
    }
  });
});
