-- The worker's hot path: claims and verdicts update runs and append run_events in one statement
-- per batch. Two things in 0001 made each of those statements cost more than it needs to.

-- 1. The reaper's index selected `state = 'running'`, so the planner also offered it to every
--    fenced write (which says `state = 'running'` too) and scanned the whole index, dead entries
--    of finished runs included, once per batch. Keyed on the lease itself it serves the reaper
--    alone: a lease is set exactly while a run is running (see the CHECK on runs).
DROP INDEX runs_running_lease;
CREATE INDEX runs_lease_expiry ON runs (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- 2. Every event row ran a foreign-key check that also locked its run row again. Events are only
--    ever appended by the statement that inserts or updates their run (a CTE over that run's
--    row) or for a run id that statement just read, and runs are never deleted; `kairos fsck`
--    reports any event without its run (check event-has-run).
ALTER TABLE run_events DROP CONSTRAINT run_events_run_id_fkey;
