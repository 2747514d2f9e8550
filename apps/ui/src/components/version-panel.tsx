/**
 * A run's version of the code on the run page: which version claimed it, a note while it waits for
 * that version's workers, and (write scope, while it has not ended) a form to move it to another
 * version or to any.
 */
import { useState } from 'preact/hooks';
import { kairosApi } from '../data/kairos-api.js';
import type { RunState, Target } from '../data/wire/index.js';
import { isActiveRunState } from '../logic/checkpoints.js';
import { pathOf } from '../logic/ui-route.js';
import { MAX_VERSION_LENGTH, versionMoveRequest, versionWaitInWords, waitsForItsVersion } from '../logic/versions.js';
import { useCan } from '../session.js';
import { Link } from './link.js';
import { Failure } from './load.js';

interface VersionedRun {
  id: string;
  state: RunState;
  deferReason: string | null;
  version: string | null;
  target: Target | null;
}

/** Why the run has not started: no live worker runs the version it is pinned to. */
export function VersionWaitNote({ run }: { run: VersionedRun }) {
  if (!waitsForItsVersion(run)) return null;
  return (
    <p role="note" class="held-note" data-testid="version-wait">
      <strong>Waiting for its version · VERSION_UNAVAILABLE</strong> {versionWaitInWords(run)}{' '}
      <Link href={pathOf({ page: 'cluster' })}>See the versions</Link>
    </p>
  );
}

export function VersionMove({ run, onMoved }: { run: VersionedRun; onMoved: () => void }) {
  const can = useCan();
  const [text, setText] = useState('');
  const [moving, setMoving] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  if (!can('write') || !isActiveRunState(run.state)) return null;

  const move = async (version: string | null): Promise<void> => {
    setError(null);
    setMoving(true);
    try {
      await kairosApi.moveRunVersion(run.id, version);
      setText('');
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setMoving(false);
      onMoved();
    }
  };

  return (
    <section aria-label="Version of the code" class="version-move">
      <details data-testid="version-move" open={waitsForItsVersion(run)}>
        <summary>Move to another version</summary>
        <form
          class="stack signal-form"
          aria-describedby="version-move-intro"
          onSubmit={(event) => {
            event.preventDefault();
            const request = versionMoveRequest(text);
            if (request.ok) void move(request.version);
            else setError(new Error(request.message));
          }}
        >
          <p id="version-move-intro" class="muted">
            Only workers of the version named here (or started with upgrade "auto") claim its later attempts and resumes; its code must replay the checkpoints it stored.
          </p>
          <label for="version-move-to">Version</label>
          <input id="version-move-to" name="version" maxLength={MAX_VERSION_LENGTH} value={text} placeholder={run.version ?? ''} onInput={(e) => setText(e.currentTarget.value)} />
          <span class="actions">
            <button type="submit" disabled={moving}>
              Move
            </button>
            <button type="button" disabled={moving} onClick={() => void move(null)}>
              Any version
            </button>
          </span>
        </form>
        {error && <Failure error={error} />}
      </details>
    </section>
  );
}
