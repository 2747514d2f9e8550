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
