import { describe, expect, it } from 'vitest';
import type { OverlapPolicy } from './closed-sets.js';
import { decideOverlap, type ActiveRun, type OverlapDecision } from './overlap.js';

const queued: ActiveRun = { id: 'q1', state: 'queued', buffered: false };
const running: ActiveRun = { id: 'r1', state: 'running', buffered: false };
const buffered: ActiveRun = { id: 'b1', state: 'queued', buffered: true };
const buffered2: ActiveRun = { id: 'b2', state: 'queued', buffered: true };

/** The active runs a slot can meet, oldest first (the order activeBySchedule reads them in). */
const STATES: Record<string, ActiveRun[]> = {
  'no active run': [],
  'one queued': [queued],
  'one running': [running],
  'one running + one buffered': [running, buffered],
  'only buffered': [buffered],
};

const run: OverlapDecision = { action: 'run', exclusive: true, cancel: [] };
const concurrent: OverlapDecision = { action: 'run', exclusive: false, cancel: [] };
const skip = (blockedBy: string): OverlapDecision => ({ action: 'skip', blockedBy });
const buffer = (blockedBy: string, cancel: string[] = []): OverlapDecision => ({ action: 'buffer', blockedBy, cancel });

describe('decideOverlap', () => {
  it.each<[OverlapPolicy, keyof typeof STATES, OverlapDecision]>([
    // allow: runs side by side, never exclusive.
    ['allow', 'no active run', concurrent],
    ['allow', 'one queued', concurrent],
    ['allow', 'one running', concurrent],
    ['allow', 'one running + one buffered', concurrent],
    ['allow', 'only buffered', concurrent],
    // skip (the default): any active run makes the slot a skipped tick.
    ['skip', 'no active run', run],
    ['skip', 'one queued', skip('q1')],
    ['skip', 'one running', skip('r1')],
    ['skip', 'one running + one buffered', skip('r1')],
    ['skip', 'only buffered', skip('b1')],
    // buffer_one: one run may wait; a slot finding the buffer full is skipped.
    ['buffer_one', 'no active run', run],
    ['buffer_one', 'one queued', buffer('q1')],
    ['buffer_one', 'one running', buffer('r1')],
    ['buffer_one', 'one running + one buffered', skip('b1')],
    ['buffer_one', 'only buffered', skip('b1')],
    // buffer_all: every slot waits, in line behind the last one waiting.
    ['buffer_all', 'no active run', run],
    ['buffer_all', 'one queued', buffer('q1')],
    ['buffer_all', 'one running', buffer('r1')],
    ['buffer_all', 'one running + one buffered', buffer('b1')],
    ['buffer_all', 'only buffered', buffer('b1')],
    // replace: everything older is cancelled; the new run waits only for a running one to stop.
    ['replace', 'no active run', run],
    ['replace', 'one queued', { action: 'run', exclusive: true, cancel: ['q1'] }],
    ['replace', 'one running', buffer('r1', ['r1'])],
    ['replace', 'one running + one buffered', buffer('r1', ['r1', 'b1'])],
    ['replace', 'only buffered', { action: 'run', exclusive: true, cancel: ['b1'] }],
  ])('%s with %s', (policy, state, expected) => {
    expect(decideOverlap(policy, STATES[state]!)).toEqual(expected);
  });

  it.each<[OverlapPolicy, ActiveRun[], OverlapDecision]>([
    ['skip', [queued, running], skip('q1')],
    ['buffer_one', [running, buffered, buffered2], skip('b1')],
    ['buffer_all', [running, buffered, buffered2], buffer('b2')],
    ['buffer_all', [buffered, buffered2], buffer('b2')],
    ['replace', [running, buffered, buffered2], buffer('r1', ['r1', 'b1', 'b2'])],
    ['replace', [queued, buffered], { action: 'run', exclusive: true, cancel: ['q1', 'b1'] }],
  ])('%s with several active runs %j', (policy, active, expected) => {
    expect(decideOverlap(policy, active)).toEqual(expected);
  });

  it('does not modify the active list it is given', () => {
    const active = [running, buffered];
    decideOverlap('replace', active);
    expect(active).toEqual([running, buffered]);
  });
});
