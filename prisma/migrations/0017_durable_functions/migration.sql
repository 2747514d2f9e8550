-- Durable functions: checkpoints inside a handler. ctx.step stores a step's result, fenced by the
-- run's lease epoch, so a later attempt of the run returns it without running the step again;
-- ctx.sleep parks the run `sleeping` until an instant, and ctx.waitForSignal parks it `waiting`
-- for a signal (POST /v1/runs/:id/signals/:name) or its timeout. A parked run is active (overlap
-- and a graph's steps count it) but holds no lease and no worker slot: its job waits in the
-- transport, delayed to its wake instant (none while it waits for a signal without a timeout),
-- and the claim that comes then resumes it, its handler running again from the top through the
-- stored checkpoints.
ALTER TABLE runs DROP CONSTRAINT runs_state_check;
ALTER TABLE runs ADD CONSTRAINT runs_state_check
  CHECK (state IN ('queued', 'running', 'sleeping', 'waiting', 'succeeded', 'failed', 'cancelled', 'dead'));
DROP INDEX runs_active_by_schedule;
CREATE INDEX runs_active_by_schedule ON runs (schedule_id, scheduled_for)
  WHERE schedule_id IS NOT NULL AND state IN ('queued', 'running', 'sleeping', 'waiting');

-- One row per checkpoint of a run: a step's stored result, a sleep and its wake instant, a wait
-- for a signal and what came of it. Keyed by run first, as run_events: every read is one run's.
CREATE TABLE run_checkpoints (
  run_id      uuid NOT NULL,
  name        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('step', 'sleep', 'signal')),
  state       text NOT NULL CHECK (state IN ('succeeded', 'sleeping', 'woken', 'waiting', 'received', 'timed_out')),
  result      json,
  lease_epoch bigint NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  wake_at     timestamptz,
  PRIMARY KEY (run_id, name),
  CHECK ((state IN ('sleeping', 'waiting')) = (finished_at IS NULL)),
  CHECK (state <> 'sleeping' OR wake_at IS NOT NULL)
);

-- Signals sent to a run, each name at most once: kept until the run asks for it (delivered_at).
CREATE TABLE run_signals (
  run_id       uuid NOT NULL,
  name         text NOT NULL,
  body         json,
  sent_at      timestamptz NOT NULL DEFAULT now(),
  sent_by      text NOT NULL,
  delivered_at timestamptz,
  PRIMARY KEY (run_id, name)
);

-- A multi-step run's step may park too: it is still pending for its graph.
CREATE OR REPLACE FUNCTION kairos_advance_graph(_graph uuid) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  g runs;
  skipped integer;
  active integer;
  unsucceeded integer;
  first_failed text;
  first_failed_reason text;
  cancel_code text;
  final text;
BEGIN
  SELECT * INTO g FROM runs WHERE id = _graph FOR NO KEY UPDATE;
  IF NOT FOUND OR g.state NOT IN ('queued', 'running') OR g.available_at = 'infinity' THEN
    RETURN;
  END IF;
  LOOP
    WITH spec AS (
      SELECT s->>'name' AS name, s->>'when' AS run_when, ARRAY(SELECT jsonb_array_elements_text(s->'dependsOn')) AS deps
      FROM jsonb_array_elements(g.target->'steps') s
    ), waiting AS (
      SELECT c.id, sp.run_when,
             count(u.id) FILTER (WHERE u.state IN ('queued', 'running', 'sleeping', 'waiting')) AS pending,
             min(u.step_name) FILTER (WHERE u.state IN ('failed', 'cancelled', 'dead')) AS failed_upstream
      FROM runs c
      JOIN spec sp ON sp.name = c.step_name
      LEFT JOIN runs u ON u.parent_run_id = _graph AND u.step_name = ANY(sp.deps)
      WHERE c.parent_run_id = _graph AND c.state = 'queued' AND c.available_at = 'infinity'
      GROUP BY c.id, sp.run_when
    ), decided AS (
      SELECT w.id, w.failed_upstream,
             CASE WHEN g.cancel_requested_at IS NOT NULL THEN 'skip_cancelled'
                  WHEN w.pending > 0 THEN NULL
                  WHEN w.run_when = 'on_success' AND w.failed_upstream IS NOT NULL THEN 'skip_upstream'
                  ELSE 'release' END AS action
      FROM waiting w
    ), changed AS (
      UPDATE runs c SET
        state = CASE WHEN d.action = 'release' THEN 'queued' ELSE 'cancelled' END,
        available_at = CASE WHEN d.action = 'release' THEN greatest(g.available_at, now()) ELSE c.available_at END,
        defer_reason = NULL,
        enqueued_at = NULL,
        reason_code = CASE d.action WHEN 'skip_cancelled' THEN 'CANCELLED_BY_USER' WHEN 'skip_upstream' THEN 'UPSTREAM_FAILED' END,
        reason_text = CASE d.action WHEN 'skip_cancelled' THEN 'the run was cancelled before this step could start'
                                    WHEN 'skip_upstream' THEN 'upstream step ' || d.failed_upstream || ' did not succeed' END,
        finished_at = CASE WHEN d.action = 'release' THEN NULL ELSE now() END,
        updated_at = now()
      FROM decided d WHERE c.id = d.id AND d.action IS NOT NULL
      RETURNING c.id, c.state, c.lease_epoch, c.reason_code, c.reason_text, c.available_at
    ), events AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
      SELECT x.id, CASE WHEN x.state = 'queued' THEN 'released' ELSE 'skipped' END, 'queued', x.state, x.lease_epoch, 'steps',
             x.reason_code,
             CASE WHEN x.state = 'queued' THEN jsonb_build_object('availableAt', x.available_at)
                  ELSE jsonb_build_object('reasonText', x.reason_text) END
      FROM changed x
    )
    -- A release changes nothing more; a skip may skip or release what waits after it.
    SELECT count(*) INTO skipped FROM changed WHERE changed.state = 'cancelled';
    EXIT WHEN skipped = 0;
  END LOOP;

  SELECT count(*) FILTER (WHERE s.state IN ('queued', 'running', 'sleeping', 'waiting')),
         count(*) FILTER (WHERE s.state <> 'succeeded'),
         (array_agg(s.step_name ORDER BY s.finished_at, s.step_name) FILTER (WHERE s.state IN ('failed', 'dead')))[1],
         (array_agg(s.reason_code ORDER BY s.finished_at, s.step_name) FILTER (WHERE s.state IN ('failed', 'dead')))[1],
         (array_agg(s.reason_code ORDER BY s.finished_at, s.step_name) FILTER (WHERE s.state = 'cancelled' AND s.reason_code <> 'UPSTREAM_FAILED'))[1]
    INTO active, unsucceeded, first_failed, first_failed_reason, cancel_code
  FROM runs s WHERE s.parent_run_id = _graph;
  IF active > 0 THEN
    RETURN;
  END IF;
  final := CASE WHEN unsucceeded = 0 THEN 'succeeded' WHEN g.cancel_requested_at IS NOT NULL THEN 'cancelled' ELSE 'dead' END;
  WITH done AS (
    UPDATE runs r SET state = final, finished_at = now(), updated_at = now(),
           result = CASE WHEN final = 'succeeded'
                         THEN (SELECT json_object_agg(s.step_name, s.result) FROM runs s WHERE s.parent_run_id = _graph) END,
           error = CASE WHEN final = 'dead'
                        THEN jsonb_build_object('message', 'step ' || coalesce(first_failed, '?') || ' did not succeed', 'step', first_failed) END,
           reason_code = CASE final WHEN 'succeeded' THEN 'SUCCEEDED' WHEN 'dead' THEN 'STEP_FAILED'
                                    ELSE coalesce(cancel_code, 'CANCELLED_BY_USER') END,
           reason_text = CASE final WHEN 'succeeded' THEN NULL
                                    WHEN 'dead' THEN 'step ' || coalesce(first_failed, '?') || ' ended dead (' || coalesce(first_failed_reason, '?') || ')'
                                    ELSE 'cancelled with its steps' END
    WHERE r.id = _graph
    RETURNING r.id, r.namespace_id, r.schedule_id, r.state, r.lease_epoch, r.reason_code, r.reason_text
  ), event AS (
    INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
    SELECT d.id, d.state, g.state, d.state, d.lease_epoch, 'steps', d.reason_code,
           CASE WHEN d.reason_text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('reasonText', d.reason_text) END
    FROM done d
  )
  INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
  SELECT d.namespace_id, 'run.dead', d.id,
         jsonb_build_object('runId', d.id, 'scheduleId', d.schedule_id, 'reasonCode', d.reason_code, 'reasonText', d.reason_text)
  FROM done d WHERE d.state = 'dead';
END $$;

-- The claim resumes a parked run once it is due: a sleep's wake instant, a wait's timeout, or a
-- signal that made it queued again.
CREATE OR REPLACE FUNCTION kairos_worker.claim_runs_v2(_owner text, _run_ids uuid[], _ttl_ms bigint)
RETURNS TABLE (id uuid, "namespaceId" uuid, "scheduleId" uuid, "scheduledFor" timestamptz, attempt integer,
               "maxAttempts" integer, target jsonb, payload json, retry jsonb, "timeoutMs" bigint, "leaseEpoch" bigint,
               "traceParent" text, "traceState" text, "mayReleaseParked" boolean,
               "graphRunId" uuid, "stepName" text, inputs json)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(_run_ids);
  END IF;
  RETURN QUERY
    WITH claimed AS (
      UPDATE runs SET state = 'running', lease_owner = _owner, lease_epoch = lease_epoch + 1,
             lease_expires_at = now() + _ttl_ms * interval '1 millisecond', heartbeat_at = now(),
             started_at = coalesce(started_at, now()), updated_at = now(),
             claimed_event_id = CASE WHEN started_at IS NULL THEN nextval('run_events_id_seq') ELSE claimed_event_id END,
             claimed_by = CASE WHEN started_at IS NULL THEN _owner ELSE claimed_by END,
             claimed_epoch = CASE WHEN started_at IS NULL THEN lease_epoch + 1 ELSE claimed_epoch END,
             claimed_attempt = CASE WHEN started_at IS NULL THEN attempt ELSE claimed_attempt END,
             claimed_until = CASE WHEN started_at IS NULL THEN now() + _ttl_ms * interval '1 millisecond' ELSE claimed_until END
      WHERE runs.id = ANY(_run_ids) AND state IN ('queued', 'sleeping', 'waiting') AND available_at <= now() + interval '20 milliseconds'
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
    LEFT JOIN schedules s ON s.id = coalesce(c.schedule_id, g.schedule_id);
END $$;

-- A parked run holds its schedule as a running one does: nothing parked behind it is released.
CREATE OR REPLACE FUNCTION kairos_worker.release_parked(_schedule_id uuid, _actor text)
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
  released record;
BEGIN
  PERFORM 1 FROM schedules s WHERE s.id = _schedule_id AND (scope IS NULL OR s.namespace_id = scope.namespace_id)
  FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    IF scope IS NOT NULL AND EXISTS (SELECT 1 FROM schedules s WHERE s.id = _schedule_id) THEN
      RAISE EXCEPTION 'schedule % is outside the namespace of worker credential %', _schedule_id, session_user
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN;
  END IF;
  FOR released IN
    WITH next AS (
      SELECT r.id FROM runs r
      WHERE r.schedule_id = _schedule_id AND r.state = 'queued' AND r.available_at = 'infinity'
        AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.schedule_id = _schedule_id AND a.exclusive
                        AND (a.state IN ('running', 'sleeping', 'waiting') OR (a.state = 'queued' AND a.available_at < 'infinity')))
      ORDER BY r.scheduled_for, r.id LIMIT 1
    ), freed AS (
      UPDATE runs r SET available_at = greatest(r.scheduled_for, now()),
             enqueued_at = CASE WHEN r.target->>'type' = 'steps' THEN NULL ELSE now() END, updated_at = now()
      FROM next WHERE r.id = next.id
      RETURNING r.id, r.available_at, r.lease_epoch, coalesce(r.target->>'queue', 'default') AS queue, r.target->>'type' = 'steps' AS graph
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT x.id, 'released', 'queued', 'queued', x.lease_epoch, _actor, '{}'::jsonb FROM freed x
    )
    SELECT x.id, x.available_at, x.queue, x.graph FROM freed x
  LOOP
    IF released.graph THEN
      PERFORM kairos_advance_graph(released.id);
      RETURN QUERY SELECT t.id, t."availableAt", t.queue FROM kairos_worker.take_ready_steps(ARRAY[released.id]) t;
    ELSE
      id := released.id;
      "availableAt" := released.available_at;
      queue := released.queue;
      RETURN NEXT;
    END IF;
  END LOOP;
END $$;

-- The checkpoints a run stored, for the holder replaying its handler.
CREATE FUNCTION kairos_worker.run_checkpoints(_run_id uuid)
RETURNS TABLE (name text, kind text, state text, result json, "wakeAt" timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  RETURN QUERY SELECT c.name, c.kind, c.state, c.result, c.wake_at FROM run_checkpoints c WHERE c.run_id = _run_id;
END $$;

-- Stores a step's result, fenced by the holder's epoch and owner. False when the lease was lost.
CREATE FUNCTION kairos_worker.save_step(_run_id uuid, _epoch bigint, _owner text, _name text, _result json, _started_at timestamptz)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  PERFORM 1 FROM runs WHERE id = _run_id AND lease_epoch = _epoch AND lease_owner = _owner AND state = 'running' FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  INSERT INTO run_checkpoints (run_id, name, kind, state, result, lease_epoch, started_at, finished_at)
  VALUES (_run_id, _name, 'step', 'succeeded', _result, _epoch, coalesce(_started_at, now()), now())
  ON CONFLICT (run_id, name) DO NOTHING;
  RETURN true;
END $$;

-- Parks a running run until _wake_at (ctx.sleep): sleeping, its lease released and its epoch
-- raised, due at the wake instant; the sleep recorded as checkpoint _name. False when the lease
-- was lost. The holder delays the run's job to the wake instant.
CREATE FUNCTION kairos_worker.sleep_run(_run_id uuid, _epoch bigint, _owner text, _name text, _wake_at timestamptz)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH parked AS (
    UPDATE runs SET state = 'sleeping', lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
           available_at = _wake_at, enqueued_at = now(), updated_at = now()
    WHERE id = _run_id AND lease_epoch = _epoch AND lease_owner = _owner AND state = 'running'
    RETURNING id, lease_epoch
  ), checkpoint AS (
    INSERT INTO run_checkpoints (run_id, name, kind, state, lease_epoch, wake_at)
    SELECT id, _name, 'sleep', 'sleeping', _epoch, _wake_at FROM parked
    ON CONFLICT (run_id, name) DO UPDATE SET wake_at = EXCLUDED.wake_at
  )
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
  SELECT id, 'slept', 'running', 'sleeping', lease_epoch, _owner, jsonb_build_object('checkpoint', _name, 'wakeAt', _wake_at) FROM parked;
  RETURN FOUND;
END $$;

-- ctx.waitForSignal: the signal _name, if it was sent (delivered now, and recorded as received);
-- else, once the wait's timeout has passed, timed_out; else the run parks waiting for it (its lease
-- released, its epoch raised, due at the timeout, or never without one). `lost` when the lease was.
CREATE FUNCTION kairos_worker.await_signal(_run_id uuid, _epoch bigint, _owner text, _name text, _timeout_at timestamptz)
RETURNS TABLE (outcome text, body json, "wakeAt" timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  checkpoint_name text := 'signal:' || _name;
  sent run_signals;
  waited run_checkpoints;
  due timestamptz;
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  -- The run's row lock orders this with a signal being sent.
  PERFORM 1 FROM runs r WHERE r.id = _run_id AND r.lease_epoch = _epoch AND r.lease_owner = _owner AND r.state = 'running' FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'lost'::text, NULL::json, NULL::timestamptz;
    RETURN;
  END IF;
  SELECT * INTO sent FROM run_signals s WHERE s.run_id = _run_id AND s.name = _name;
  IF FOUND THEN
    UPDATE run_signals s SET delivered_at = coalesce(s.delivered_at, now()) WHERE s.run_id = _run_id AND s.name = _name;
    INSERT INTO run_checkpoints (run_id, name, kind, state, result, lease_epoch, finished_at)
    VALUES (_run_id, checkpoint_name, 'signal', 'received', sent.body, _epoch, now())
    ON CONFLICT (run_id, name) DO UPDATE SET state = 'received', result = EXCLUDED.result, finished_at = now();
    RETURN QUERY SELECT 'received'::text, sent.body, NULL::timestamptz;
    RETURN;
  END IF;
  SELECT * INTO waited FROM run_checkpoints c WHERE c.run_id = _run_id AND c.name = checkpoint_name;
  due := CASE WHEN FOUND THEN waited.wake_at ELSE _timeout_at END;
  IF due IS NOT NULL AND due <= now() THEN
    INSERT INTO run_checkpoints (run_id, name, kind, state, lease_epoch, finished_at, wake_at)
    VALUES (_run_id, checkpoint_name, 'signal', 'timed_out', _epoch, now(), due)
    ON CONFLICT (run_id, name) DO UPDATE SET state = 'timed_out', finished_at = now();
    RETURN QUERY SELECT 'timed_out'::text, NULL::json, due;
    RETURN;
  END IF;
  UPDATE runs r SET state = 'waiting', lease_epoch = r.lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
         available_at = coalesce(due, 'infinity'), enqueued_at = CASE WHEN due IS NULL THEN NULL ELSE now() END, updated_at = now()
  WHERE r.id = _run_id;
  INSERT INTO run_checkpoints (run_id, name, kind, state, lease_epoch, wake_at)
  VALUES (_run_id, checkpoint_name, 'signal', 'waiting', _epoch, due)
  ON CONFLICT (run_id, name) DO NOTHING;
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
  VALUES (_run_id, 'awaiting_signal', 'running', 'waiting', _epoch + 1, _owner, jsonb_build_object('signal', _name, 'timeoutAt', due));
  RETURN QUERY SELECT 'parked'::text, NULL::json, due;
END $$;

-- A parked run counts as active wherever a queued one does: in the recovery loops, the re-timing
-- of delayed jobs and the undoing of an enqueued mark.
CREATE OR REPLACE FUNCTION kairos_worker.queued_available_at(_run_ids uuid[])
RETURNS TABLE (id uuid, "availableAt" timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  PERFORM kairos_worker.require_runs(_run_ids);
  RETURN QUERY SELECT r.id, r.available_at FROM runs r WHERE r.id = ANY(_run_ids) AND r.state IN ('queued', 'sleeping', 'waiting');
END $$;

CREATE OR REPLACE FUNCTION kairos_worker.mark_undispatched(_run_ids uuid[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(_run_ids);
  UPDATE runs SET enqueued_at = NULL WHERE id = ANY(_run_ids) AND state IN ('queued', 'sleeping', 'waiting');
END $$;

-- A cancellation asked of a parked run whose job arrived first ends it as one of a queued run.
CREATE OR REPLACE FUNCTION kairos_worker.cancel_queued_run(_run_id uuid, _actor text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH done AS (
    UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER',
           reason_text = 'cancelled before it started', finished_at = now(), updated_at = now()
    WHERE id = _run_id AND state IN ('queued', 'sleeping', 'waiting') AND cancel_requested_at IS NOT NULL
    RETURNING id, lease_epoch
  )
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code)
  SELECT id, 'cancelled', 'queued', 'cancelled', lease_epoch, _actor, 'CANCELLED_BY_USER' FROM done;
  RETURN FOUND;
END $$;

REVOKE ALL ON FUNCTION kairos_worker.run_checkpoints(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_worker.save_step(uuid, bigint, text, text, json, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_worker.sleep_run(uuid, bigint, text, text, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_worker.await_signal(uuid, bigint, text, text, timestamptz) FROM PUBLIC;

DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.run_checkpoints(uuid), kairos_worker.save_step(uuid, bigint, text, text, json, timestamptz), '
                     'kairos_worker.sleep_run(uuid, bigint, text, text, timestamptz), kairos_worker.await_signal(uuid, bigint, text, text, timestamptz) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;
