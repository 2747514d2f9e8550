-- Retention: the leading scheduler prunes finished runs (with their events and ticks), run-less
-- ticks and published outbox rows once they are older than KAIROS_RETENTION, in small batches.

-- Deleting a run makes Postgres look for rows that still reference it; without these indexes
-- each deleted run would cost a scan of ticks and of runs.
CREATE INDEX ticks_run ON ticks (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX runs_source_run ON runs (source_run_id) WHERE source_run_id IS NOT NULL;

-- A retry or republish outlives the run it re-executed: pruning that run forgets the link
-- rather than keeping the whole chain alive.
ALTER TABLE runs DROP CONSTRAINT runs_source_run_id_fkey;
ALTER TABLE runs ADD CONSTRAINT runs_source_run_id_fkey
  FOREIGN KEY (source_run_id) REFERENCES runs (id) ON DELETE SET NULL;

-- Ticks that created no run (missed, skipped, error) age out on their own, oldest first.
CREATE INDEX ticks_runless_age ON ticks (created_at) WHERE run_id IS NULL;
