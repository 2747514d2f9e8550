-- No run starts before its instant. A worker's timer runs on its estimate of the database's clock,
-- so a delayed job may fire a little early, and the claim takes runs up to 20 ms before they are
-- due (refusing them would cost a round trip and a new delay each). Such a run used to be
-- recorded, and started, before its instant by that much. Now the claim records the instant as its
-- start and answers only once the database's clock has passed it, so the handler starts after it.
-- A claim of runs already due is unchanged and does not wait.

-- Waits until the database's clock has passed `_at` (at once when it is null or past); always true,
-- so a query can wait in a condition that is evaluated once.
CREATE FUNCTION kairos_wait_until(_at timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  WHILE _at IS NOT NULL AND clock_timestamp() < _at LOOP
    PERFORM pg_sleep(extract(epoch FROM _at - clock_timestamp()));
  END LOOP;
  RETURN true;
END $$;

CREATE OR REPLACE FUNCTION kairos_worker.claim_runs_v2(_owner text, _run_ids uuid[], _ttl_ms bigint)
RETURNS TABLE (id uuid, "namespaceId" uuid, "scheduleId" uuid, "scheduledFor" timestamptz, attempt integer,
               "maxAttempts" integer, target jsonb, payload json, retry jsonb, "timeoutMs" bigint, "leaseEpoch" bigint,
               "traceParent" text, "traceState" text, "mayReleaseParked" boolean,
               "graphRunId" uuid, "stepName" text, inputs json)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  admitted uuid[] := _run_ids;
  placed uuid[] := '{}';
  claimed_at timestamptz := now();
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(_run_ids);
  END IF;
  -- Only runs under a limit pay for deciding it.
  IF EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY(_run_ids) AND r.concurrency_key IS NOT NULL)
     OR EXISTS (SELECT 1 FROM queue_limits l JOIN runs r ON r.namespace_id = l.namespace_id AND l.queue = coalesce(r.target->>'queue', 'default')
                WHERE r.id = ANY(_run_ids)) THEN
    PERFORM kairos_lock_places(_run_ids);
    -- Started once the locks are held: after the verdict that freed the place committed, so a
    -- run's start never precedes the end of the one whose place it took.
    claimed_at := clock_timestamp();
    SELECT coalesce(array_agg(a.id), '{}'), coalesce(array_agg(a.id) FILTER (WHERE a.holds_place), '{}')
      INTO admitted, placed FROM kairos_admit(_run_ids, claimed_at) a;
  END IF;
  RETURN QUERY
    WITH claimed AS (
      UPDATE runs SET state = 'running', lease_owner = _owner, lease_epoch = lease_epoch + 1,
             lease_expires_at = now() + _ttl_ms * interval '1 millisecond', heartbeat_at = now(),
             started_at = coalesce(started_at, greatest(claimed_at, runs.available_at)), updated_at = now(),
             held_at = NULL, holds_place = runs.id = ANY(placed),
             claimed_event_id = CASE WHEN started_at IS NULL THEN nextval('run_events_id_seq') ELSE claimed_event_id END,
             claimed_by = CASE WHEN started_at IS NULL THEN _owner ELSE claimed_by END,
             claimed_epoch = CASE WHEN started_at IS NULL THEN lease_epoch + 1 ELSE claimed_epoch END,
             claimed_attempt = CASE WHEN started_at IS NULL THEN attempt ELSE claimed_attempt END,
             claimed_until = CASE WHEN started_at IS NULL THEN now() + _ttl_ms * interval '1 millisecond' ELSE claimed_until END
      WHERE runs.id = ANY(admitted) AND state IN ('queued', 'sleeping', 'waiting') AND available_at <= now() + interval '20 milliseconds'
        AND cancel_requested_at IS NULL AND target->>'type' <> 'steps'
      RETURNING runs.*
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT c.id, 'claimed', 'queued', 'running', c.lease_epoch, _owner,
             jsonb_build_object('attempt', c.attempt, 'leaseExpiresAt', c.lease_expires_at)
      FROM claimed c WHERE c.claimed_epoch IS DISTINCT FROM c.lease_epoch
    ), woken AS (
      -- A run claimed again may be waking from a sleep (a first claim never is).
      UPDATE run_checkpoints k SET state = 'woken', finished_at = now()
      FROM claimed c WHERE c.claimed_epoch IS DISTINCT FROM c.lease_epoch AND k.run_id = c.id AND k.state = 'sleeping'
    )
    SELECT c.id, c.namespace_id, coalesce(c.schedule_id, g.schedule_id), c.scheduled_for, c.attempt, c.max_attempts, c.target,
           c.payload, c.retry, c.timeout_ms, c.lease_epoch, c.trace_parent, c.trace_state,
           coalesce(s.overlap IN ('buffer_one', 'buffer_all', 'replace')
                    OR EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = s.id AND p.state = 'queued'
                               AND p.available_at = 'infinity'), false),
           c.parent_run_id, c.step_name,
           CASE WHEN c.parent_run_id IS NOT NULL THEN
             (SELECT coalesce(json_object_agg(u.step_name, u.result), '{}'::json) FROM runs u
              WHERE u.parent_run_id = c.parent_run_id
                AND u.step_name IN (SELECT jsonb_array_elements_text(st->'dependsOn')
                                    FROM jsonb_array_elements(g.target->'steps') st WHERE st->>'name' = c.step_name))
           END
    FROM claimed c
    LEFT JOIN runs g ON g.id = c.parent_run_id
    LEFT JOIN schedules s ON s.id = coalesce(c.schedule_id, g.schedule_id)
    -- Evaluated once, after the claim: the answer (and so every handler's start) waits for the
    -- latest instant among the runs claimed early.
    WHERE (SELECT kairos_wait_until(max(w.available_at)) FROM claimed w);
END $$;
