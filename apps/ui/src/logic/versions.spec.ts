import { describe, expect, it } from 'vitest';
import { versionInWords, versionMoveRequest, versionWaitInWords, waitsForItsVersion } from './versions.js';

describe('versions', () => {
  it('tells a run waiting for its version from one held by a limit or running', () => {
    expect(waitsForItsVersion({ state: 'queued', deferReason: 'VERSION_UNAVAILABLE' })).toBe(true);
    expect(waitsForItsVersion({ state: 'queued', deferReason: 'QUEUE_LIMIT' })).toBe(false);
    expect(waitsForItsVersion({ state: 'succeeded', deferReason: 'VERSION_UNAVAILABLE' })).toBe(false);
  });

  it('says which version and queue a waiting run needs', () => {
    expect(versionWaitInWords({ version: '2026.12.03-1', target: { type: 'handler', name: 'bill', queue: 'billing' } })).toMatch(
      /^It stored a checkpoint under version "2026.12.03-1", and no live worker of queue "billing" runs that version\./,
    );
  });

  it('reads the version a move asks for, trimmed, and refuses an empty or long one', () => {
    expect(versionMoveRequest(' 2026.12.04-1 ')).toEqual({ ok: true, version: '2026.12.04-1' });
    expect(versionMoveRequest('  ')).toEqual({ ok: false, message: 'Name the version to move the run to, or move it to any version.' });
    expect(versionMoveRequest('v'.repeat(201)).ok).toBe(false);
  });

  it('lets a version with no active runs stop its workers', () => {
    expect(versionInWords({ activeRuns: 0, pinnedWaiting: 0 })).toEqual({ stoppable: true, words: 'no active runs: its workers may be stopped' });
    expect(versionInWords({ activeRuns: 1, pinnedWaiting: 0 })).toEqual({ stoppable: false, words: '1 active run needs it' });
    expect(versionInWords({ activeRuns: 3, pinnedWaiting: 2 }).words).toBe('3 active runs need it, 2 waiting for a worker');
  });
});
