-- Multi-step runs. A run may execute a graph of steps instead of one target: its target is then
-- {"type": "steps", "steps": [{name, dependsOn, when, target, retry, timeoutMs}, ...]}, frozen when
-- the run is created. The graph's run is never handed to a worker; each of its steps executes as a
-- run of its own (a step run: parent_run_id is the graph's run, step_name its step), created with
-- the graph, so every guarantee of a run (lease and epoch, heartbeat, cancellation, timeout,
-- attempts, backoff, crash budget, the reaper, the relay, the reconciler) holds for each step.
--
-- A step run waits parked (queued, available_at 'infinity', never handed to the transport) until
-- its upstream steps are terminal. The transaction that records the last upstream verdict it waited
-- for releases it (or skips it: cancelled with UPSTREAM_FAILED, available_at still 'infinity'), and
-- ends the graph's run once no step is active: a trigger on every state change of a step run does
-- it, whoever makes the change (a worker's verdict, the reaper, a cancellation). The graph's run
-- starts running when its first step is claimed; it holds no lease of its own.
ALTER TABLE runs
  ADD COLUMN parent_run_id uuid,
  ADD COLUMN step_name     text,
  ADD CONSTRAINT runs_step_of_graph CHECK ((parent_run_id IS NULL) = (step_name IS NULL));
CREATE UNIQUE INDEX runs_graph_steps ON runs (parent_run_id, step_name) WHERE parent_run_id IS NOT NULL;

-- A graph's run is running while its steps are, without a lease: the lease rule holds for the rest.
DO $$
DECLARE
  lease_check text;
BEGIN
  SELECT conname INTO lease_check FROM pg_constraint
  WHERE conrelid = 'runs'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%lease_owner IS NOT NULL%';
  EXECUTE format('ALTER TABLE runs DROP CONSTRAINT %I', lease_check);
END $$;
ALTER TABLE runs ADD CONSTRAINT runs_lease_while_running CHECK (
  CASE WHEN target->>'type' = 'steps' THEN lease_owner IS NULL AND lease_expires_at IS NULL
       ELSE (state = 'running') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL) END);

-- Moves graph _graph on: releases each waiting step whose upstream steps are all terminal (an
-- `on_success` step only when they all succeeded, else it is skipped with UPSTREAM_FAILED; an
-- `always` step whatever they ended as), skips every waiting step of a graph whose cancellation
-- was requested, and ends the graph's run once no step is active: succeeded when every step
-- succeeded (its result is the steps' results by name), cancelled when its cancellation was
-- requested, dead otherwise. Holds the graph run's row lock, so the verdicts of two steps that end
-- at once are read one after the other. A released step is due at once (or at the graph's own
-- instant, for a graph made ahead of its slot) and not yet handed to the transport: the caller
-- takes it with kairos_worker.take_ready_steps, and the relay hands over whatever no caller took.
-- A step is pending while queued, running, or parked by its durable function (sleeping, waiting:
-- the states migration 0017 adds).
CREATE FUNCTION kairos_advance_graph(_graph uuid) RETURNS void
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

-- Every state change of a step run: its first claim starts its graph's run; its end moves the
-- graph on. The graph's own moves (releases and skips of its steps) happen inside this trigger and
-- are not moved on again: the loop in kairos_advance_graph already goes on until nothing moves.
CREATE FUNCTION kairos_step_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  IF NEW.state = 'running' THEN
    IF EXISTS (SELECT 1 FROM runs g WHERE g.id = NEW.parent_run_id AND g.state = 'queued') THEN
      WITH started AS (
        UPDATE runs g SET state = 'running', started_at = coalesce(g.started_at, now()), updated_at = now()
        WHERE g.id = NEW.parent_run_id AND g.state = 'queued'
        RETURNING g.id, g.lease_epoch
      )
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT s.id, 'started', 'queued', 'running', s.lease_epoch, NEW.lease_owner, jsonb_build_object('step', NEW.step_name)
      FROM started s;
    END IF;
  ELSIF NEW.state IN ('succeeded', 'failed', 'cancelled', 'dead') AND pg_trigger_depth() = 1 THEN
    PERFORM kairos_advance_graph(NEW.parent_run_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER runs_step_changed AFTER UPDATE OF state ON runs FOR EACH ROW
  WHEN (NEW.parent_run_id IS NOT NULL AND OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION kairos_step_changed();

-- Protocol version 2: claims answer which graph and step a run belongs to and the results of its
-- upstream steps; a worker that ended steps takes the steps that became ready with
-- take_ready_steps and hands them to the transport. Version 1 is still served, unchanged.
CREATE OR REPLACE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 1, 2 $$;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$;

-- claim_runs with, for a step run, its graph's run, its step name and its upstream steps' results by
-- name ("inputs"), and its graph's schedule. The run of a graph itself is never claimed. It also
-- resumes a run its durable function parked (migration 0017) once it is due: a sleep's wake
-- instant, a wait's timeout, or a signal that queued it again; and marks the sleep it woke from.
CREATE FUNCTION kairos_worker.claim_runs_v2(_owner text, _run_ids uuid[], _ttl_ms bigint)
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

-- Version 1's claim: the same claim, without the step columns.
CREATE OR REPLACE FUNCTION kairos_worker.claim_runs(_owner text, _run_ids uuid[], _ttl_ms bigint)
RETURNS TABLE (id uuid, "namespaceId" uuid, "scheduleId" uuid, "scheduledFor" timestamptz, attempt integer,
               "maxAttempts" integer, target jsonb, payload json, retry jsonb, "timeoutMs" bigint, "leaseEpoch" bigint,
               "traceParent" text, "traceState" text, "mayReleaseParked" boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
    SELECT c.id, c."namespaceId", c."scheduleId", c."scheduledFor", c.attempt, c."maxAttempts", c.target, c.payload, c.retry,
           c."timeoutMs", c."leaseEpoch", c."traceParent", c."traceState", c."mayReleaseParked"
    FROM kairos_worker.claim_runs_v2(_owner, _run_ids, _ttl_ms) c;
END $$;

-- The steps of these graphs that are ready and not yet handed to the transport, within the
-- caller's namespace and queues, marked handed over: the caller hands them to the transport after
-- its commit (a crash before it leaves them to the reconciler, as any run marked enqueued). Steps
-- of other queues stay for the relay.
CREATE FUNCTION kairos_worker.take_ready_steps(_graph_run_ids uuid[])
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  RETURN QUERY
    UPDATE runs r SET enqueued_at = now()
    WHERE r.parent_run_id = ANY(_graph_run_ids) AND r.state = 'queued' AND r.enqueued_at IS NULL AND r.available_at < 'infinity'
      AND (scope IS NULL OR (r.namespace_id = scope.namespace_id AND coalesce(r.target->>'queue', 'default') = ANY(scope.queues)))
    RETURNING r.id, r.available_at, coalesce(r.target->>'queue', 'default');
END $$;

-- release_parked, for a parked run that is a graph: its run is released, its ready steps are
-- answered (a graph's own run never goes to the transport). A run its durable function parked
-- (sleeping, waiting: migration 0017) holds its schedule as a running one does.
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

REVOKE ALL ON FUNCTION kairos_worker.claim_runs_v2(text, uuid[], bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_worker.take_ready_steps(uuid[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_advance_graph(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_step_changed() FROM PUBLIC;

-- Worker credentials made before this migration may call the new functions too.
DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.claim_runs_v2(text, uuid[], bigint), kairos_worker.take_ready_steps(uuid[]) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;
