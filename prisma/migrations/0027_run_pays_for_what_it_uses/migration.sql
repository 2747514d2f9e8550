-- A run that uses no subscription pays nothing for subscriptions, none pays for a check that can
-- never fail, and a heartbeat renewing a lease writes no index.
--
-- The verdicts a worker writes (finish_runs, and finish_runs_v3 through it) record their
-- outcome events (run.succeeded, run.failed for a run that ended dead) themselves, in the
-- statement that writes them: one look at the subscriptions for the batch, and no row trigger
-- per run. The trigger keeps every other path that ends an attempt (the reaper, a retry, a
-- cancellation): a verdict is told from them by the number it gives its finish
-- (finished_event_id), which only the verdict writes. The events are the same, after the batch's
-- run.dead events as before.
CREATE OR REPLACE FUNCTION kairos_worker.finish_runs(_owner text, _verdicts json)
RETURNS TABLE (id uuid)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_verdicts) v));
  END IF;
  IF EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_verdicts) v)) AND r.holds_place) THEN
    PERFORM kairos_lock_places(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_verdicts) v));
  END IF;
  RETURN QUERY
    WITH v AS (
      SELECT * FROM json_to_recordset(_verdicts)
        AS v(id uuid, epoch bigint, state text, result text, error text, reason_code text, reason_text text, response text)
    ), done AS (
      UPDATE runs r SET state = v.state, result = v.result::json, error = v.error::jsonb, reason_code = v.reason_code,
             reason_text = v.reason_text, response = v.response::jsonb, finished_at = now(), updated_at = now(),
             lease_owner = NULL, lease_expires_at = NULL, finished_event_id = nextval('run_events_id_seq'), finished_by = _owner
      FROM v WHERE r.id = v.id AND r.lease_epoch = v.epoch AND r.lease_owner = _owner AND r.state = 'running'
      RETURNING r.id, r.namespace_id, r.schedule_id, r.sensor_id, r.parent_run_id, r.attempt, r.max_attempts, r.scheduled_for,
                r.state, r.reason_code, r.reason_text, r.error
    ), events AS (
      INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
      SELECT e.namespace_id, e.topic, e.id, e.payload FROM (
        SELECT d.namespace_id, 'run.dead' AS topic, d.id, 1 AS ord,
               jsonb_build_object('runId', d.id, 'scheduleId', d.schedule_id, 'reasonCode', d.reason_code, 'reasonText', d.reason_text) AS payload
        FROM done d WHERE d.state = 'dead'
        UNION ALL
        -- As kairos_run_outcome_event writes them, for the runs (not steps) that succeeded or ended dead.
        SELECT d.namespace_id, t.topic, d.id, 2,
               jsonb_build_object('runId', d.id, 'scheduleId', d.schedule_id, 'sensorId', d.sensor_id, 'attempt', d.attempt,
                                  'maxAttempts', d.max_attempts, 'scheduledFor', d.scheduled_for)
               || CASE WHEN d.state = 'succeeded' THEN '{}'::jsonb ELSE jsonb_build_object(
                    'willRetry', false,
                    'reasonCode', coalesce(d.reason_code, (SELECT e.reason_code FROM run_events e
                                                           WHERE e.run_id = d.id AND e.kind = 'retry_scheduled' ORDER BY e.id DESC LIMIT 1)),
                    'reasonText', coalesce(d.reason_text, d.error->>'message'),
                    'nextAttemptAt', NULL) END
        FROM done d CROSS JOIN LATERAL (SELECT CASE WHEN d.state = 'succeeded' THEN 'run.succeeded' ELSE 'run.failed' END AS topic) t
        WHERE d.parent_run_id IS NULL AND d.state IN ('succeeded', 'dead')
          AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.state = 'active')
          AND kairos_subscribed(d.namespace_id, t.topic)
      ) e ORDER BY e.ord
    )
    SELECT d.id FROM done d;
END $$;

DROP TRIGGER runs_outcome_event ON runs;
CREATE TRIGGER runs_outcome_event AFTER UPDATE OF state ON runs FOR EACH ROW
  WHEN (NEW.parent_run_id IS NULL AND OLD.state = 'running'
        AND (NEW.state IN ('succeeded', 'dead') OR (NEW.state = 'queued' AND NEW.attempt > OLD.attempt))
        AND NEW.finished_event_id IS NOT DISTINCT FROM OLD.finished_event_id)
  EXECUTE FUNCTION kairos_run_outcome_event();

-- A run's namespace is the caller's, and namespaces are never deleted: the foreign key's check,
-- a lookup and a share lock on the namespace's row for every run inserted, guarded nothing.
-- `kairos fsck` reports a run of no namespace (run-has-namespace).
ALTER TABLE runs DROP CONSTRAINT runs_namespace_id_fkey;

-- A lease's renewal changes only the lease's expiry and the heartbeat: with no index naming either,
-- it is a heap-only update wherever its page has room, and a tenth of each page is left for that.
-- The reaper finds expired leases among the running runs (a few per place of every worker) through
-- runs_running_by_queue, instead of an index of every lease's expiry that each claim, renewal and
-- verdict wrote to.
DROP INDEX runs_lease_expiry;
ALTER TABLE runs SET (fillfactor = 90);
