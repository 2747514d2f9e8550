-- Versions of users' code in flight. A run records the version of the worker that first claimed it
-- (`version`); once it stored a checkpoint it is pinned to that version: later attempts and resumes
-- are claimed only by workers of that version, or by workers started with upgrade 'auto'. A run
-- with no live worker for it stays queued, held with deferReason VERSION_UNAVAILABLE, until one
-- registers. Plain columns, indexed only for the runs held for their version: a run that never meets a
-- second version pays nothing.
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

-- The runs held for their version, by queue and version: what a worker's registration (and the
-- limits loop) releases. Only held runs are in it, so the rest of the runs never pay for it.
CREATE INDEX runs_held_by_version ON runs ((coalesce(target->>'queue', 'default')), version)
  WHERE held_at IS NOT NULL AND defer_reason = 'VERSION_UNAVAILABLE';

-- Whether a worker of _worker_version, started with upgrade _worker_upgrade, may take a run of
-- _run_version (null: a run claimed by no version yet, or moved to any version). With
-- kairos_worker_live, the one definition of a version served on a queue.
CREATE FUNCTION kairos_worker_serves(_worker_version text, _worker_upgrade text, _run_version text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT _worker_upgrade = 'auto' OR _run_version IS NULL OR _worker_version = _run_version $$;

-- Releases the runs of queue _queue (of namespace _namespace, or of every namespace when null)
-- held until a worker of their version runs, for each one a live worker of the queue serves:
-- each is due again and handed over by the scheduler's relay, which the NOTIFY wakes, as a new job
-- (<id>-h<hold count>). Answers how many it released.
CREATE FUNCTION kairos_release_version_held(_namespace uuid, _queue text, _actor text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  released integer;
BEGIN
  WITH live AS MATERIALIZED (
    SELECT w.version, w.upgrade FROM workers w WHERE w.queue = _queue AND kairos_worker_live(w.last_seen_at, w.stopped_at)
  ), next AS (
    SELECT r.id FROM runs r
    WHERE coalesce(r.target->>'queue', 'default') = _queue AND r.held_at IS NOT NULL AND r.defer_reason = 'VERSION_UNAVAILABLE'
      AND (_namespace IS NULL OR r.namespace_id = _namespace)
      AND EXISTS (SELECT 1 FROM live l WHERE kairos_worker_serves(l.version, l.upgrade, r.version))
    FOR UPDATE SKIP LOCKED
  ), freed AS (
    UPDATE runs r SET held_at = NULL, defer_reason = NULL, updated_at = now() FROM next WHERE r.id = next.id
    RETURNING r.id, r.state, r.lease_epoch, r.version
  ), event AS (
    INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
    SELECT f.id, 'released', f.state, f.state, f.lease_epoch, _actor, jsonb_build_object('version', f.version) FROM freed f
  )
  SELECT count(*) INTO released FROM freed;
  IF released > 0 THEN
    PERFORM pg_notify('kairos_released', '');
  END IF;
  RETURN released;
END $$;
REVOKE ALL ON FUNCTION kairos_release_version_held(uuid, text, text) FROM PUBLIC;

-- An operator moves run _run_id of namespace _namespace to version _version (null: a worker of any
-- version may take it, and the next claim stamps its own): a `version_moved` event when the
-- version changed, and, when the run was held for its version and a live worker serves the new
-- one, its release. No row for a run the namespace does not have; outcome 'ended', and nothing
-- changed, for a run that ended; otherwise 'moved'. Locks the run's row, so it is ordered with a
-- claim of the run.
CREATE FUNCTION kairos_move_run_version(_namespace uuid, _run_id uuid, _version text, _actor text)
RETURNS TABLE (outcome text, state text, "from" text, "to" text, released boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  run runs;
  freed boolean := false;
BEGIN
  SELECT * INTO run FROM runs r WHERE r.id = _run_id AND r.namespace_id = _namespace FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF run.state NOT IN ('queued', 'running', 'sleeping', 'waiting') THEN
    RETURN QUERY SELECT 'ended'::text, run.state, run.version, run.version, false;
    RETURN;
  END IF;
  IF run.version IS DISTINCT FROM _version THEN
    UPDATE runs r SET version = _version, updated_at = now() WHERE r.id = _run_id;
    INSERT INTO run_events (run_id, kind, lease_epoch, actor, detail)
    VALUES (_run_id, 'version_moved', run.lease_epoch, _actor, jsonb_build_object('from', run.version, 'to', _version));
  END IF;
  IF run.held_at IS NOT NULL AND run.defer_reason = 'VERSION_UNAVAILABLE'
     AND EXISTS (SELECT 1 FROM workers w WHERE w.queue = coalesce(run.target->>'queue', 'default')
                 AND kairos_worker_live(w.last_seen_at, w.stopped_at) AND kairos_worker_serves(w.version, w.upgrade, _version)) THEN
    UPDATE runs r SET held_at = NULL, defer_reason = NULL, updated_at = now() WHERE r.id = _run_id;
    INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
    VALUES (_run_id, 'released', run.state, run.state, run.lease_epoch, _actor, jsonb_build_object('version', _version));
    PERFORM pg_notify('kairos_released', '');
    freed := true;
  END IF;
  RETURN QUERY SELECT 'moved'::text, run.state, run.version, _version, freed;
END $$;
REVOKE ALL ON FUNCTION kairos_move_run_version(uuid, uuid, text, text) FROM PUBLIC;

-- The claim, with versions. The worker's version and upgrade mode are read once (its registry
-- row, by the owner name it registered under). A claimed run takes the worker's version when it
-- has none yet, or when it stored no checkpoint (it is not pinned: the version that stores its
-- first checkpoint is the one it is pinned to). A run of another version that stored a checkpoint
-- is pinned to it: a worker started with upgrade 'auto' takes it over (its version becomes the
-- worker's, with an `upgraded` event); any other worker leaves it out of the answer, and, when a
-- live worker of the queue serves the run, makes a queued one due again shortly so its job comes
-- back to the queue's workers, or else holds it (VERSION_UNAVAILABLE) until one registers
-- (kairos_release_version_held). Runs of this worker's version, and runs claimed for the first
-- time, pay one probe of the batch's rows. Otherwise as before.
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
  own_version text;
  own_upgrade text;
  -- Runs whose version becomes this worker's though they have one: unpinned, or taken over.
  retagged uuid[] := '{}';
  -- Runs of another version that stored a checkpoint, each with its version.
  pinned uuid[] := '{}';
  pinned_to jsonb := '{}';
  -- The runs an 'auto' worker takes over, each with the version it was pinned to.
  upgraded jsonb := '{}';
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(_run_ids);
  END IF;
  SELECT w.version, w.upgrade INTO own_version, own_upgrade FROM workers w WHERE w.id = _owner;
  -- Only a run another version claimed before pays for the version check: one probe of the batch's rows otherwise.
  IF EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY(_run_ids) AND r.version <> own_version) THEN
    SELECT coalesce(array_agg(v.id) FILTER (WHERE NOT v.checkpointed), '{}'), coalesce(array_agg(v.id) FILTER (WHERE v.checkpointed), '{}'),
           coalesce(jsonb_object_agg(v.id, v.version) FILTER (WHERE v.checkpointed), '{}')
      INTO retagged, pinned, pinned_to
    FROM (SELECT r.id, r.version, EXISTS (SELECT 1 FROM run_checkpoints k WHERE k.run_id = r.id) AS checkpointed FROM runs r
          WHERE r.id = ANY(_run_ids) AND r.version <> own_version AND r.state IN ('queued', 'sleeping', 'waiting')
            AND r.available_at <= now() + interval '20 milliseconds' AND r.cancel_requested_at IS NULL AND r.target->>'type' <> 'steps') v;
    IF own_upgrade = 'auto' THEN
      retagged := retagged || pinned;
      upgraded := pinned_to;
    ELSIF cardinality(pinned) > 0 THEN
      admitted := ARRAY(SELECT a FROM unnest(_run_ids) a WHERE NOT a = ANY(pinned));
      UPDATE runs r SET available_at = now() + interval '250 milliseconds', updated_at = now()
      WHERE r.id = ANY(pinned) AND r.version <> own_version AND r.state = 'queued' AND r.held_at IS NULL
        AND EXISTS (SELECT 1 FROM workers w WHERE w.queue = coalesce(r.target->>'queue', 'default')
                    AND kairos_worker_live(w.last_seen_at, w.stopped_at) AND kairos_worker_serves(w.version, w.upgrade, r.version));
      -- A sleep that is over is over: the run waits queued for its version, its sleep woken.
      WITH held AS (
        UPDATE runs r SET held_at = now(), defer_reason = 'VERSION_UNAVAILABLE', enqueued_at = NULL, hold_count = r.hold_count + 1,
               state = CASE WHEN r.state = 'sleeping' THEN 'queued' ELSE r.state END, updated_at = now()
        FROM runs o
        WHERE o.id = r.id AND r.id = ANY(pinned) AND r.version <> own_version AND r.state IN ('queued', 'sleeping', 'waiting') AND r.held_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.queue = coalesce(r.target->>'queue', 'default')
                          AND kairos_worker_live(w.last_seen_at, w.stopped_at) AND kairos_worker_serves(w.version, w.upgrade, r.version))
        RETURNING r.id, o.state AS was, r.state, r.lease_epoch, r.version
      ), woken AS (
        UPDATE run_checkpoints k SET state = 'woken', finished_at = now()
        FROM held h WHERE h.was = 'sleeping' AND k.run_id = h.id AND k.state = 'sleeping'
      )
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT h.id, 'held', h.was, h.state, h.lease_epoch, _owner, jsonb_build_object('deferReason', 'VERSION_UNAVAILABLE', 'version', h.version)
      FROM held h;
    END IF;
  END IF;
  -- Only runs under a limit pay for deciding it.
  IF EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY(admitted) AND r.concurrency_key IS NOT NULL)
     OR EXISTS (SELECT 1 FROM queue_limits l JOIN runs r ON r.namespace_id = l.namespace_id AND l.queue = coalesce(r.target->>'queue', 'default')
                WHERE r.id = ANY(admitted)) THEN
    PERFORM kairos_lock_places(admitted);
    -- Started once the locks are held: after the verdict that freed the place committed, so a
    -- run's start never precedes the end of the one whose place it took.
    claimed_at := clock_timestamp();
    SELECT coalesce(array_agg(a.id), '{}'), coalesce(array_agg(a.id) FILTER (WHERE a.holds_place), '{}')
      INTO admitted, placed FROM kairos_admit(admitted, claimed_at) a;
  END IF;
  -- Only throttled runs pay for their throttle: one probe of the batch's rows otherwise.
  IF EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY(admitted) AND r.throttle IS NOT NULL) THEN
    admitted := kairos_admit_throttled(admitted, claimed_at);
  END IF;
  RETURN QUERY
    WITH claimed AS (
      UPDATE runs SET state = 'running', lease_owner = _owner, lease_epoch = lease_epoch + 1,
             lease_expires_at = now() + _ttl_ms * interval '1 millisecond', heartbeat_at = now(),
             started_at = coalesce(started_at, greatest(claimed_at, runs.available_at)), updated_at = now(),
             held_at = NULL, holds_place = runs.id = ANY(placed),
             version = CASE WHEN runs.id = ANY(retagged) THEN own_version ELSE coalesce(runs.version, own_version) END,
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
    ), takeover AS (
      INSERT INTO run_events (run_id, kind, lease_epoch, actor, detail)
      SELECT c.id, 'upgraded', c.lease_epoch, _owner, jsonb_build_object('from', upgraded->>(c.id::text), 'to', own_version)
      FROM claimed c WHERE upgraded ? c.id::text
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

-- Protocol version 6: versions. register_worker_v2 records the worker's upgrade mode beside its
-- version, clears a goodbye said under the same id, and releases the runs of its queue held until
-- a worker it serves ran; stop_worker says goodbye once the worker's runs finished or were handed
-- back, so its version stops counting at once rather than when its heartbeats are overdue.
CREATE FUNCTION kairos_worker.register_worker_v2(_id text, _queue text, _handlers text[], _version text, _clock_offset_ms float8, _upgrade text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  PERFORM kairos_worker.require_queue(_queue);
  INSERT INTO workers (id, queue, handlers, version, upgrade, started_at, last_seen_at, clock_offset_ms)
  VALUES (_id, _queue, ARRAY(SELECT DISTINCT h FROM unnest(_handlers) h ORDER BY h), _version, _upgrade, now(), now(), _clock_offset_ms)
  ON CONFLICT (id) DO UPDATE SET queue = EXCLUDED.queue, handlers = EXCLUDED.handlers, version = EXCLUDED.version, upgrade = EXCLUDED.upgrade,
                                 started_at = now(), last_seen_at = now(), clock_offset_ms = EXCLUDED.clock_offset_ms, stopped_at = NULL;
  -- A credential's worker takes only its namespace's runs.
  PERFORM kairos_release_version_held(scope.namespace_id, _queue, _id);
END $$;

-- A worker of an older protocol leaves runs of other versions to their own.
CREATE OR REPLACE FUNCTION kairos_worker.register_worker(_id text, _queue text, _handlers text[], _version text, _clock_offset_ms float8)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.register_worker_v2(_id, _queue, _handlers, _version, _clock_offset_ms, 'pinned');
END $$;

-- A heartbeat late behind its worker's goodbye leaves it stopped.
CREATE OR REPLACE FUNCTION kairos_worker.touch_worker(_id text, _clock_offset_ms float8)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  UPDATE workers SET last_seen_at = now(), clock_offset_ms = coalesce(_clock_offset_ms, clock_offset_ms)
  WHERE id = _id AND stopped_at IS NULL AND (scope IS NULL OR queue = ANY(scope.queues));
END $$;

CREATE FUNCTION kairos_worker.stop_worker(_id text)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  UPDATE workers SET stopped_at = now() WHERE id = _id AND stopped_at IS NULL AND (scope IS NULL OR queue = ANY(scope.queues));
END $$;

-- The producers' view of a queue's consumers counts live workers only.
CREATE OR REPLACE FUNCTION kairos_worker.consumer_clock_offsets()
RETURNS TABLE (queue text, "offset" float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT w.queue, min(w.clock_offset_ms) FROM workers w
    WHERE kairos_worker_live(w.last_seen_at, w.stopped_at) AND w.clock_offset_ms IS NOT NULL GROUP BY w.queue;
END $$;

REVOKE ALL ON FUNCTION kairos_worker.register_worker_v2(text, text, text[], text, float8, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_worker.stop_worker(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 1, 6 $$;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 6 $$;

DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.register_worker_v2(text, text, text[], text, float8, text), '
                     'kairos_worker.stop_worker(text) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;
