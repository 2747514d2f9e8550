-- The worker protocol: everything a worker says to the ledger is a call of a function in schema
-- kairos_worker, never a statement on a table. A worker built against one release keeps working
-- when the server's tables change in the next, because each function keeps its signature for as
-- long as its protocol version is served (kairos_worker.protocol_versions()).
--
-- Protocol version 1 (this migration): register and heartbeat a worker, claim a batch of runs,
-- renew their leases and read cancellations, write fenced verdicts and retries, hand a run back,
-- drain it at a clean stop, release a run parked behind one that ended, and read what a worker
-- needs to re-time its delayed jobs.
--
-- Every function runs with its owner's rights (SECURITY DEFINER) and checks who calls it: a login
-- that holds a worker credential (kairos_worker.credentials, made by `kairos workers grant`) may
-- act only on the runs, schedules and queues of its namespace and queues. No one else may execute
-- the functions but their owner (the role that migrates the ledger, which the server's processes
-- use) and superusers, who act on every run.
CREATE SCHEMA kairos_worker;

CREATE TABLE kairos_worker.credentials (
  role_name    text PRIMARY KEY,
  namespace_id uuid NOT NULL REFERENCES namespaces (id),
  queues       text[] NOT NULL CHECK (cardinality(queues) > 0),
  created_at   timestamptz NOT NULL DEFAULT now(),
  created_by   text NOT NULL
);

-- The oldest and the newest protocol versions this server serves. A release that changes the
-- protocol serves the previous version too, for at least one more release.
CREATE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 1, 1 $$;

CREATE FUNCTION kairos_worker.protocol_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1 $$;

-- The calling login's credential, or null for the owner's (the server's) roles.
CREATE FUNCTION kairos_worker.caller_scope() RETURNS kairos_worker.credentials
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  SELECT * FROM kairos_worker.credentials WHERE role_name = session_user::text
$$;

-- Refuses when any of these runs lies outside the caller's namespace and queues.
CREATE FUNCTION kairos_worker.require_runs(_run_ids uuid[]) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
  outside uuid;
BEGIN
  IF scope IS NULL THEN
    RETURN;
  END IF;
  SELECT r.id INTO outside FROM runs r
  WHERE r.id = ANY(_run_ids)
    AND (r.namespace_id <> scope.namespace_id OR NOT coalesce(r.target->>'queue', 'default') = ANY(scope.queues))
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'run % is outside the namespace and queues of worker credential %', outside, session_user
      USING ERRCODE = 'insufficient_privilege';
  END IF;
END $$;

-- Refuses a queue outside the caller's queues.
CREATE FUNCTION kairos_worker.require_queue(_queue text) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  IF scope IS NOT NULL AND NOT _queue = ANY(scope.queues) THEN
    RAISE EXCEPTION 'queue % is outside the queues of worker credential % (%)', _queue, session_user, array_to_string(scope.queues, ', ')
      USING ERRCODE = 'insufficient_privilege';
  END IF;
END $$;

-- Records (or re-records, after a restart under the same id) what a worker serves.
CREATE FUNCTION kairos_worker.register_worker(_id text, _queue text, _handlers text[], _version text, _clock_offset_ms float8)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_queue(_queue);
  INSERT INTO workers (id, queue, handlers, version, started_at, last_seen_at, clock_offset_ms)
  VALUES (_id, _queue, ARRAY(SELECT DISTINCT h FROM unnest(_handlers) h ORDER BY h), _version, now(), now(), _clock_offset_ms)
  ON CONFLICT (id) DO UPDATE SET queue = EXCLUDED.queue, handlers = EXCLUDED.handlers, version = EXCLUDED.version,
                                 started_at = now(), last_seen_at = now(), clock_offset_ms = EXCLUDED.clock_offset_ms;
END $$;

-- The heartbeat's refresh of a worker's registry row and of its host's clock offset.
CREATE FUNCTION kairos_worker.touch_worker(_id text, _clock_offset_ms float8)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  UPDATE workers SET last_seen_at = now(), clock_offset_ms = coalesce(_clock_offset_ms, clock_offset_ms)
  WHERE id = _id AND (scope IS NULL OR queue = ANY(scope.queues));
END $$;

-- Per queue, the smallest clock offset among its live workers (the host furthest ahead, which
-- promotes a delayed job first). Queues whose workers never measured are absent.
CREATE FUNCTION kairos_worker.consumer_clock_offsets()
RETURNS TABLE (queue text, "offset" float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT w.queue, min(w.clock_offset_ms) FROM workers w
    WHERE w.last_seen_at > now() - interval '1 minute' AND w.clock_offset_ms IS NOT NULL GROUP BY w.queue;
END $$;

-- Claims each due, queued run among _run_ids for _owner: running, epoch + 1, lease until now +
-- ttl; the first claim recorded on the run row, a later one as a `claimed` event. Runs not queued,
-- not due, or with a cancellation waiting are left out of the answer. A claim that would make a
-- second exclusive run of one schedule running raises the unique violation of
-- runs_one_exclusive_running, and the whole call changes nothing.
CREATE FUNCTION kairos_worker.claim_runs(_owner text, _run_ids uuid[], _ttl_ms bigint)
RETURNS TABLE (id uuid, "namespaceId" uuid, "scheduleId" uuid, "scheduledFor" timestamptz, attempt integer,
               "maxAttempts" integer, target jsonb, payload json, retry jsonb, "timeoutMs" bigint, "leaseEpoch" bigint,
               "traceParent" text, "traceState" text, "mayReleaseParked" boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  -- The hot functions (claim, finish, retry, renew) look the caller's credential up inline rather
  -- than through a helper: they run for every batch, and a nested call measured several per cent of
  -- the worker's hot path (npm run bench -- protocol). The server's own roles skip the run check.
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
      WHERE runs.id = ANY(_run_ids) AND state = 'queued' AND available_at <= now() + interval '20 milliseconds'
        AND cancel_requested_at IS NULL
      RETURNING runs.*
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT c.id, 'claimed', 'queued', 'running', c.lease_epoch, _owner,
             jsonb_build_object('attempt', c.attempt, 'leaseExpiresAt', c.lease_expires_at)
      FROM claimed c WHERE c.claimed_epoch IS DISTINCT FROM c.lease_epoch
    )
    SELECT c.id, c.namespace_id, c.schedule_id, c.scheduled_for, c.attempt, c.max_attempts, c.target, c.payload, c.retry,
           c.timeout_ms, c.lease_epoch, c.trace_parent, c.trace_state,
           coalesce(s.overlap IN ('buffer_one', 'buffer_all', 'replace')
                    OR EXISTS (SELECT 1 FROM runs p WHERE p.schedule_id = c.schedule_id AND p.state = 'queued'
                               AND p.available_at = 'infinity'), false)
    FROM claimed c LEFT JOIN schedules s ON s.id = c.schedule_id;
END $$;

-- Why a claim found nothing to take: the run's state, when it is due (null when parked), whether a
-- cancellation waits, and when its lease expires.
CREATE FUNCTION kairos_worker.run_snapshot(_run_id uuid)
RETURNS TABLE (state text, "dueInMs" float8, "cancelRequested" boolean, "leaseExpiresInMs" float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  RETURN QUERY
    SELECT r.state,
           CASE WHEN r.available_at = 'infinity' THEN NULL
                ELSE (extract(epoch FROM r.available_at - now()) * 1000)::float8 END,
           r.cancel_requested_at IS NOT NULL,
           (extract(epoch FROM r.lease_expires_at - now()) * 1000)::float8
    FROM runs r WHERE r.id = _run_id;
END $$;

-- Final verdicts, each fenced by the epoch and owner it was claimed with, recorded on the run row.
-- _verdicts is a JSON array of {id, epoch, state, result, error, reason_code, reason_text,
-- response}, result/error/response as JSON text. Answers the ids written; a run missing from the
-- answer had lost its lease and nothing changed. A run that ended dead adds a run.dead outbox event.
CREATE FUNCTION kairos_worker.finish_runs(_owner text, _verdicts json)
RETURNS TABLE (id uuid)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_verdicts) v));
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
      RETURNING r.id, r.namespace_id, r.schedule_id, r.state, v.reason_code, v.reason_text
    ), dead_letter AS (
      INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
      SELECT d.namespace_id, 'run.dead', d.id,
             jsonb_build_object('runId', d.id, 'scheduleId', d.schedule_id, 'reasonCode', d.reason_code, 'reasonText', d.reason_text)
      FROM done d WHERE d.state = 'dead'
    )
    SELECT d.id FROM done d;
END $$;

-- Failed attempts returned to the queue for their next attempt, each due after its delay, fenced
-- like finish_runs. _retries is a JSON array of {id, epoch, delay_ms, error, reason_code, detail},
-- error and detail as JSON text. Answers when each requeued run is due.
CREATE FUNCTION kairos_worker.retry_runs(_owner text, _retries json)
RETURNS TABLE (id uuid, "availableAt" timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_retries) v));
  END IF;
  RETURN QUERY
    WITH v AS (
      SELECT * FROM json_to_recordset(_retries) AS v(id uuid, epoch bigint, delay_ms bigint, error text, reason_code text, detail text)
    ), requeued AS (
      UPDATE runs r SET state = 'queued', attempt = r.attempt + 1,
             available_at = now() + v.delay_ms * interval '1 millisecond', defer_reason = 'retry backoff',
             error = v.error::jsonb, lease_owner = NULL, lease_expires_at = NULL, enqueued_at = now(), updated_at = now()
      FROM v WHERE r.id = v.id AND r.lease_epoch = v.epoch AND r.lease_owner = _owner AND r.state = 'running'
      RETURNING r.id, r.lease_epoch, r.attempt, r.available_at, v.delay_ms, v.reason_code, v.detail
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
      SELECT q.id, 'retry_scheduled', 'running', 'queued', q.lease_epoch, _owner, q.reason_code,
             q.detail::jsonb || jsonb_build_object('nextAttempt', q.attempt, 'delayMs', q.delay_ms, 'availableAt', q.available_at)
      FROM requeued q
    )
    SELECT q.id, q.available_at FROM requeued q;
END $$;

-- The batched heartbeat: extends every lease _owner still holds among (_run_ids[i], _epochs[i]).
-- The answer lists the leases still held and whether cancellation was requested; a run missing from
-- it was lost, and its executor must stop and write nothing.
CREATE FUNCTION kairos_worker.renew_leases(_owner text, _run_ids uuid[], _epochs bigint[], _ttl_ms bigint)
RETURNS TABLE (id uuid, epoch bigint, "cancelRequested" boolean, "cancelRequestedBy" text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(_run_ids);
  END IF;
  RETURN QUERY
    UPDATE runs r SET lease_expires_at = now() + _ttl_ms * interval '1 millisecond', heartbeat_at = now()
    FROM unnest(_run_ids, _epochs) AS h(id, epoch)
    WHERE r.id = h.id AND r.lease_epoch = h.epoch AND r.lease_owner = _owner AND r.state = 'running'
    RETURNING r.id, r.lease_epoch, r.cancel_requested_at IS NOT NULL, r.cancel_requested_by;
END $$;

-- A claimed run handed back at a clean stop of its worker: queued and due now, the attempt and the
-- crash budget untouched, the epoch raised. False when the lease had already been lost.
CREATE FUNCTION kairos_worker.drain_run(_run_id uuid, _epoch bigint, _owner text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH drained AS (
    UPDATE runs SET state = 'queued', lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
           available_at = now(), enqueued_at = now(), updated_at = now()
    WHERE id = _run_id AND lease_epoch = _epoch AND lease_owner = _owner AND state = 'running'
    RETURNING id, lease_epoch
  )
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
  SELECT id, 'drained', 'running', 'queued', lease_epoch, _owner, '{"why":"worker shutting down"}'::jsonb FROM drained;
  RETURN FOUND;
END $$;

-- A claimed run its worker cannot execute (no code for its handler), handed back for another: queued,
-- the attempt and the crash budget untouched, the epoch raised, due after _delay_ms doubled for each
-- earlier hand-back up to _max_delay_ms. Answers when it is due again; null when the lease was lost.
CREATE FUNCTION kairos_worker.hand_back_run(_run_id uuid, _epoch bigint, _owner text, _delay_ms bigint, _max_delay_ms bigint,
                                            _reason_code text, _reason_text text)
RETURNS timestamptz LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  due timestamptz;
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH earlier AS (
    SELECT count(*)::int AS n FROM run_events WHERE run_id = _run_id AND kind = 'handed_back'
  ), back AS (
    UPDATE runs SET state = 'queued', lease_epoch = lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
           available_at = now() + least(_delay_ms * power(2, least((SELECT n FROM earlier), 30)), _max_delay_ms) * interval '1 millisecond',
           defer_reason = _reason_text, enqueued_at = now(), updated_at = now()
    WHERE id = _run_id AND lease_epoch = _epoch AND lease_owner = _owner AND state = 'running'
    RETURNING id, lease_epoch, available_at
  ), event AS (
    INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
    SELECT id, 'handed_back', 'running', 'queued', lease_epoch, _owner, _reason_code,
           jsonb_build_object('reasonText', _reason_text, 'availableAt', available_at)
    FROM back
  )
  SELECT available_at INTO due FROM back;
  RETURN due;
END $$;

-- Records that a holder's write was refused because its lease had moved on. The run row is untouched.
CREATE FUNCTION kairos_worker.record_lease_lost(_run_id uuid, _epoch bigint, _owner text, _detail jsonb)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  INSERT INTO run_events (run_id, kind, lease_epoch, actor, reason_code, detail)
  SELECT id, 'lease_lost', _epoch, _owner, 'LEASE_LOST', _detail FROM runs WHERE id = _run_id;
END $$;

-- Cancels a queued run whose cancellation was requested before any worker claimed it.
CREATE FUNCTION kairos_worker.cancel_queued_run(_run_id uuid, _actor text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH done AS (
    UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER',
           reason_text = 'cancelled before it started', finished_at = now(), updated_at = now()
    WHERE id = _run_id AND state = 'queued' AND cancel_requested_at IS NOT NULL
    RETURNING id, lease_epoch
  )
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code)
  SELECT id, 'cancelled', 'queued', 'cancelled', lease_epoch, _actor, 'CANCELLED_BY_USER' FROM done;
  RETURN FOUND;
END $$;

-- Releases the oldest run parked behind schedule _schedule_id once no exclusive run of it is
-- active, holding the schedule's row lock so a tick cannot park another run behind one that is
-- ending meanwhile. Answers the released run (id, when due, its queue), to be dispatched.
CREATE FUNCTION kairos_worker.release_parked(_schedule_id uuid, _actor text)
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
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
  RETURN QUERY
    WITH next AS (
      SELECT r.id FROM runs r
      WHERE r.schedule_id = _schedule_id AND r.state = 'queued' AND r.available_at = 'infinity'
        AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.schedule_id = _schedule_id AND a.exclusive
                        AND (a.state = 'running' OR (a.state = 'queued' AND a.available_at < 'infinity')))
      ORDER BY r.scheduled_for, r.id LIMIT 1
    ), released AS (
      UPDATE runs r SET available_at = greatest(r.scheduled_for, now()), enqueued_at = now(), updated_at = now()
      FROM next WHERE r.id = next.id
      RETURNING r.id, r.available_at, r.lease_epoch, coalesce(r.target->>'queue', 'default') AS queue
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT x.id, 'released', 'queued', 'queued', x.lease_epoch, _actor, '{}'::jsonb FROM released x
    )
    SELECT x.id, x.available_at, x.queue FROM released x;
END $$;

-- When each of these runs is due, for those still queued (a worker re-timing its delayed jobs).
CREATE FUNCTION kairos_worker.queued_available_at(_run_ids uuid[])
RETURNS TABLE (id uuid, "availableAt" timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  PERFORM kairos_worker.require_runs(_run_ids);
  RETURN QUERY SELECT r.id, r.available_at FROM runs r WHERE r.id = ANY(_run_ids) AND r.state = 'queued';
END $$;

-- Undoes the enqueued mark of queued runs whose jobs the transport refused, so the scheduler's relay
-- hands them over again.
CREATE FUNCTION kairos_worker.mark_undispatched(_run_ids uuid[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(_run_ids);
  UPDATE runs SET enqueued_at = NULL WHERE id = ANY(_run_ids) AND state = 'queued';
END $$;

-- Nothing in the schema is anyone's but the owner's and the credentials' granted to them.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA kairos_worker FROM PUBLIC;
REVOKE ALL ON SCHEMA kairos_worker FROM PUBLIC;
