-- Versions of users' code in flight. A run records the version of the worker that first claimed it
-- (`version`); once it stored a checkpoint it is pinned to that version: later attempts and resumes
-- are claimed only by workers of that version, or by workers started with upgrade 'auto'. A run
-- with no live worker for it stays queued, held with deferReason VERSION_UNAVAILABLE, until one
-- registers. Plain columns with no index: a run that never meets a second version pays nothing.
ALTER TABLE runs ADD COLUMN version text;

ALTER TABLE runs DROP CONSTRAINT runs_held_reason;
ALTER TABLE runs ADD CONSTRAINT runs_held_reason
  CHECK (held_at IS NULL OR defer_reason IN ('CONCURRENCY_LIMIT', 'QUEUE_LIMIT', 'QUEUE_RATE_LIMIT', 'VERSION_UNAVAILABLE'));

-- How a worker treats runs pinned to another version ('pinned': leaves them; 'auto': takes them
-- over), and when it said goodbye: a stopped worker no longer serves its version at once, where a
-- vanished one stops counting once its heartbeats are overdue.
ALTER TABLE workers ADD COLUMN upgrade text NOT NULL DEFAULT 'pinned' CHECK (upgrade IN ('pinned', 'auto'));
ALTER TABLE workers ADD COLUMN stopped_at timestamptz;

-- Whether a worker serves its queue now: it has not said goodbye, and it was seen within the last
-- minute (it touches its row every third of its lease TTL). The one definition of a live worker.
CREATE FUNCTION kairos_worker_live(_last_seen_at timestamptz, _stopped_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT _stopped_at IS NULL AND _last_seen_at > now() - interval '1 minute' $$;

-- A run's checkpoints in the order they began, so a replay can name the one stored where the code
-- now asks for another.
CREATE OR REPLACE FUNCTION kairos_worker.run_checkpoints(_run_id uuid)
RETURNS TABLE (name text, kind text, state text, result json, "wakeAt" timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  RETURN QUERY SELECT c.name, c.kind, c.state, c.result, c.wake_at FROM run_checkpoints c WHERE c.run_id = _run_id
    ORDER BY c.started_at, c.name;
END $$;
