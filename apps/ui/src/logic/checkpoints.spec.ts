import { describe, expect, it } from 'vitest';
import type { Checkpoint, RunState } from '../data/wire/index.js';
import {
  awaitedSignal,
  checkpointRows,
  isActiveRunState,
  readsAgain,
  signalAnswerInWords,
  signalNameOf,
  signalRequest,
  type CheckpointRow,
  type SignalRequest,
} from './checkpoints.js';

const T0 = '2026-12-01T09:00:00Z';
const checkpoint = (name: string, kind: Checkpoint['kind'], state: Checkpoint['state'], extra: Partial<Checkpoint> = {}): Checkpoint => ({
  name, kind, state, result: null, startedAt: T0, finishedAt: null, wakeAt: null, ...extra,
});

type Told = Pick<CheckpointRow, 'icon' | 'kindLabel' | 'stateLabel' | 'took' | 'wake' | 'resultLabel' | 'result'>;

describe('checkpointRows', () => {
  it.each<[string, Checkpoint, Told]>([
    [
      'a step with its result',
      checkpoint('charge', 'step', 'succeeded', { result: { id: 'ch_1' }, finishedAt: '2026-12-01T09:00:01.500Z' }),
      { icon: '◆', kindLabel: 'step', stateLabel: 'succeeded', took: '1.5 s', wake: null, resultLabel: 'Result', result: '{\n  "id": "ch_1"\n}' },
    ],
    [
      'a step that returned nothing (null is its result)',
      checkpoint('notify', 'step', 'succeeded', { finishedAt: '2026-12-01T09:00:00.040Z' }),
      { icon: '◆', kindLabel: 'step', stateLabel: 'succeeded', took: '40 ms', wake: null, resultLabel: 'Result', result: 'null' },
    ],
    [
      'a sleep under way',
      checkpoint('sleep#1', 'sleep', 'sleeping', { wakeAt: '2026-12-02T09:00:00Z' }),
      { icon: '☾', kindLabel: 'sleep', stateLabel: 'sleeping', took: '', wake: { label: 'wakes', at: '2026-12-02T09:00:00Z' }, resultLabel: 'Result', result: null },
    ],
    [
      'a sleep over',
      checkpoint('sleep#1', 'sleep', 'woken', { wakeAt: '2026-12-01T10:00:00Z', finishedAt: '2026-12-01T10:00:00.300Z' }),
      { icon: '☾', kindLabel: 'sleep', stateLabel: 'woken', took: '1 h 0 min', wake: { label: 'was due', at: '2026-12-01T10:00:00Z' }, resultLabel: 'Result', result: null },
    ],
    [
      'a wait with a timeout',
      checkpoint('signal:approval', 'signal', 'waiting', { wakeAt: '2026-12-08T09:00:00Z' }),
      { icon: '✉', kindLabel: 'signal', stateLabel: 'waiting', took: '', wake: { label: 'times out', at: '2026-12-08T09:00:00Z' }, resultLabel: 'Body', result: null },
    ],
    [
      'a wait without a timeout',
      checkpoint('signal:approval', 'signal', 'waiting'),
      { icon: '✉', kindLabel: 'signal', stateLabel: 'waiting', took: '', wake: null, resultLabel: 'Body', result: null },
    ],
    [
      'a signal received, with its body',
      checkpoint('signal:approval', 'signal', 'received', { result: { approved: true, by: ['ana'] }, finishedAt: '2026-12-01T09:03:05Z' }),
      {
        icon: '✉',
        kindLabel: 'signal',
        stateLabel: 'received',
        took: '3 min 5 s',
        wake: null,
        resultLabel: 'Body',
        result: '{\n  "approved": true,\n  "by": [\n    "ana"\n  ]\n}',
      },
    ],
    [
      'a signal received without a body',
      checkpoint('signal:go', 'signal', 'received', { finishedAt: '2026-12-01T09:00:02Z' }),
      { icon: '✉', kindLabel: 'signal', stateLabel: 'received', took: '2.0 s', wake: null, resultLabel: 'Body', result: 'null' },
    ],
    [
      'a wait that timed out',
      checkpoint('signal:approval', 'signal', 'timed_out', { wakeAt: '2026-12-01T09:10:00Z', finishedAt: '2026-12-01T09:10:00.500Z' }),
      { icon: '✉', kindLabel: 'signal', stateLabel: 'timed out', took: '10 min 0 s', wake: { label: 'timed out', at: '2026-12-01T09:10:00Z' }, resultLabel: 'Body', result: null },
    ],
    [
      'a wait for an event',
      checkpoint('event:order.paid', 'event', 'waiting', { wakeAt: '2026-12-02T09:00:00Z' }),
      { icon: '⚡', kindLabel: 'event', stateLabel: 'waiting', took: '', wake: { label: 'times out', at: '2026-12-02T09:00:00Z' }, resultLabel: 'Event', result: null },
    ],
    [
      'an event received, the event its result',
      checkpoint('event:order.paid', 'event', 'received', { result: { id: 'evt-1', name: 'order.paid', data: { orderId: 'o-1' } }, finishedAt: '2026-12-01T09:00:04Z' }),
      {
        icon: '⚡',
        kindLabel: 'event',
        stateLabel: 'received',
        took: '4.0 s',
        wake: null,
        resultLabel: 'Event',
        result: '{\n  "id": "evt-1",\n  "name": "order.paid",\n  "data": {\n    "orderId": "o-1"\n  }\n}',
      },
    ],
  ])('%s', (_name, c, told) => {
    const [row] = checkpointRows([c]);
    expect(row).toMatchObject({ name: c.name, kind: c.kind, state: c.state, startedAt: c.startedAt, finishedAt: c.finishedAt, ...told });
    expect(row!.stateWords).not.toBe('');
  });

  it.each<[Checkpoint['state'], string]>([
    ['waiting', 'the run waits for a matching event'],
    ['received', 'a matching event arrived; it is what the wait returned'],
    ['timed_out', 'no matching event arrived before the timeout'],
  ])('tells an event wait %s as its own', (state, words) => {
    expect(checkpointRows([checkpoint('event:order.paid', 'event', state)])[0]!.stateWords).toBe(words);
  });

  it('keeps the order the checkpoints began in', () => {
    const rows = checkpointRows([checkpoint('b', 'step', 'succeeded'), checkpoint('sleep#1', 'sleep', 'woken'), checkpoint('a', 'step', 'succeeded')]);
    expect(rows.map((r) => r.name)).toEqual(['b', 'sleep#1', 'a']);
    expect(checkpointRows([])).toEqual([]);
  });
});

describe('signalNameOf and awaitedSignal', () => {
  it.each<[string, string]>([
    ['signal:approval', 'approval'],
    ['signal:signal:x', 'signal:x'],
    ['signal:', ''],
    ['approval', 'approval'],
    ['sleep#1', 'sleep#1'],
  ])('%s → %s', (name, signal) => {
    expect(signalNameOf(name)).toBe(signal);
  });

  it.each<[string, RunState, Checkpoint[], string | null]>([
    ['a waiting run and its open wait', 'waiting', [checkpoint('load', 'step', 'succeeded'), checkpoint('signal:approval', 'signal', 'waiting')], 'approval'],
    ['the newest open wait', 'waiting', [checkpoint('signal:first', 'signal', 'received'), checkpoint('signal:second', 'signal', 'waiting')], 'second'],
    ['a waiting run whose waits are over', 'waiting', [checkpoint('signal:approval', 'signal', 'timed_out')], null],
    ['a sleeping run', 'sleeping', [checkpoint('sleep#1', 'sleep', 'sleeping')], null],
    ['a run no longer waiting (the signal just arrived)', 'queued', [checkpoint('signal:approval', 'signal', 'waiting')], null],
    ['a run without checkpoints', 'waiting', [], null],
    ['a run waiting for an event, not a signal', 'waiting', [checkpoint('event:order.paid', 'event', 'waiting')], null],
  ])('%s', (_name, state, checkpoints, signal) => {
    expect(awaitedSignal({ state, checkpoints })).toBe(signal);
  });
});

describe('isActiveRunState and readsAgain', () => {
  it.each<[RunState, boolean]>([
    ['queued', true],
    ['running', true],
    ['sleeping', true],
    ['waiting', true],
    ['succeeded', false],
    ['failed', false],
    ['cancelled', false],
    ['dead', false],
  ])('%s active: %s', (state, active) => {
    expect(isActiveRunState(state)).toBe(active);
  });

  const step = checkpoint('charge', 'step', 'succeeded');
  it.each<[string, RunState, unknown[] | null, Checkpoint[], boolean]>([
    ['a multi-step run running', 'running', [{}], [], true],
    ['a multi-step run queued', 'queued', [{}], [], true],
    ['a multi-step run ended', 'succeeded', [{}], [], false],
    ['a durable function running past its first checkpoint', 'running', null, [step], true],
    ['a durable function asleep (its wake is an event)', 'sleeping', null, [step, checkpoint('sleep#1', 'sleep', 'sleeping')], false],
    ['a durable function waiting (its signal is an event)', 'waiting', null, [checkpoint('signal:go', 'signal', 'waiting')], false],
    ['a durable function ended', 'succeeded', null, [step], false],
    ['a plain run running', 'running', null, [], false],
  ])('%s: %s', (_name, state, steps, checkpoints, again) => {
    expect(readsAgain({ state, steps, checkpoints })).toBe(again);
  });
});

describe('signalRequest and signalAnswerInWords', () => {
  it.each<[string, string, string, SignalRequest]>([
    ['an object body', 'approval', '{"approved": true}', { ok: true, name: 'approval', body: { approved: true } }],
    ['an empty body is {}', 'approval', '  \n', { ok: true, name: 'approval', body: {} }],
    ['an array body', 'items', '[1, 2]', { ok: true, name: 'items', body: [1, 2] }],
    ['a null body', 'go', 'null', { ok: true, name: 'go', body: null }],
    ['a name with spaces and slashes, kept as typed', 'review #2/b', '{}', { ok: true, name: 'review #2/b', body: {} }],
    ['the longest name', 'n'.repeat(200), '{}', { ok: true, name: 'n'.repeat(200), body: {} }],
  ])('%s', (_name, name, body, request) => {
    expect(signalRequest(name, body)).toEqual(request);
  });

  it.each<[string, string, string, 'name' | 'body', RegExp]>([
    ['no name', '', '{}', 'name', /name is required/],
    ['a name too long', 'n'.repeat(201), '{}', 'name', /at most 200 characters/],
    ['a body that is not JSON', 'approval', '{approved: true}', 'body', /not valid JSON/],
    ['a body cut short', 'approval', '{"approved": ', 'body', /not valid JSON/],
  ])('refuses %s', (_name, name, body, field, message) => {
    const request = signalRequest(name, body);
    expect(request).toMatchObject({ ok: false, field });
    expect(request.ok === false && request.message).toMatch(message);
  });

  it.each<[boolean, RegExp]>([
    [true, /^Signal "approval" delivered: .*resumes now/],
    [false, /^Signal "approval" kept: .*when it waits for it/],
  ])('delivered %s', (delivered, words) => {
    expect(signalAnswerInWords('approval', { delivered })).toMatch(words);
  });
});
