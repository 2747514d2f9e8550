-- The happy path of a run is recorded on the run row: its creation, its first claim and the
-- verdict of its holder no longer each append a run_events row. Every other transition (a failed
-- attempt, a retry, a lease lost, a requeue, a cancellation, a release, a drain, a hand-back)
-- still appends one. Readers read both as one story (the ledger's run story query).
--
-- Each transition recorded on the row takes its id from the run_events sequence, in the same
-- statement that makes it, so the row's transitions and the run's events keep one order and the
-- runEvents feed follows both from one cursor. An id is null where the transition was recorded as
-- an event instead (a run parked by its overlap policy, a later claim, a run that never ran) and
-- on every run written before this migration: those rows are read as they are.
ALTER TABLE runs
  -- Created: when (created_at) and by whom.
  ADD COLUMN created_event_id bigint,
  ADD COLUMN created_by       text,
  -- The first claim: when (started_at), by which worker, at which epoch and attempt, leased until when.
  ADD COLUMN claimed_event_id bigint,
  ADD COLUMN claimed_by       text,
  ADD COLUMN claimed_epoch    bigint,
  ADD COLUMN claimed_attempt  integer,
  ADD COLUMN claimed_until    timestamptz,
  -- The holder's verdict: when (finished_at), by which worker, with state, reason, error and the
  -- HTTP response its target answered (at the lease epoch, which nothing moves after a verdict).
  ADD COLUMN finished_event_id bigint,
  ADD COLUMN finished_by       text,
  ADD COLUMN response          jsonb;
