/**
 * Versions of the code as the dashboard tells them: a run waiting for the version it is pinned to
 * (the run page's note), the version a move asks for, and whether a version's workers may be
 * stopped (the cluster page's table).
 */
import type { RunState, Target, Version } from '../data/wire/index.js';
import { queueOf } from './limits.js';

/** The longest version the API takes. */
export const MAX_VERSION_LENGTH = 200;

/** Whether the run is held until a worker of its version runs. */
export function waitsForItsVersion(run: { state: RunState; deferReason: string | null }): boolean {
  return run.state === 'queued' && run.deferReason === 'VERSION_UNAVAILABLE';
}

/** Why a run waits for its version, and what starts it. */
export function versionWaitInWords(run: { version: string | null; target: Target | null }): string {
  const version = run.version === null ? 'its version' : `version "${run.version}"`;
  return `It stored a checkpoint under ${version}, and no live worker of queue "${queueOf(run.target)}" runs that version. It starts as soon as one does (or a worker started with upgrade "auto"), or when it is moved to another version.`;
}

/** The version a move asks for from what was typed: trimmed, 1 to 200 characters; or the refusal to show. */
export function versionMoveRequest(text: string): { ok: true; version: string } | { ok: false; message: string } {
  const version = text.trim();
  if (version === '') return { ok: false, message: 'Name the version to move the run to, or move it to any version.' };
  if (version.length > MAX_VERSION_LENGTH) return { ok: false, message: `A version is at most ${MAX_VERSION_LENGTH} characters.` };
  return { ok: true, version };
}

/** Whether stopping the version's workers strands no run: none of its runs is active. */
export function versionInWords(version: Pick<Version, 'activeRuns' | 'pinnedWaiting'>): { stoppable: boolean; words: string } {
  if (version.activeRuns === 0) return { stoppable: true, words: 'no active runs: its workers may be stopped' };
  const runs = version.activeRuns === 1 ? '1 active run needs it' : `${version.activeRuns} active runs need it`;
  return { stoppable: false, words: version.pinnedWaiting === 0 ? runs : `${runs}, ${version.pinnedWaiting} waiting for a worker` };
}
