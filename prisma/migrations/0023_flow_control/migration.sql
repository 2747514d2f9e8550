-- Flow control of schedules started by events: { debounce, throttle, rateLimit, batch }, each
-- per key (a template over the event). Everything is decided in the transaction that stores the
-- event, under the schedule's row lock, against what these tables hold for the key; a window in
-- progress is a queued run in the ledger (and a delayed job), so no process has to be alive to
-- end it: the run becomes due, and whichever worker takes it runs it.
ALTER TABLE schedules ADD COLUMN flow jsonb;
ALTER TABLE schedules ADD CONSTRAINT schedules_flow_of_events CHECK (flow IS NULL OR kind = 'event');

-- The runs a rate limit let through ('rate', when made) and the starts a throttle planned
-- ('throttle', when due), per schedule and key; marks older than their window are pruned as the
-- key is used.
CREATE TABLE flow_marks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id uuid NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('rate', 'throttle')),
  key         text NOT NULL,
  at          timestamptz NOT NULL,
  run_id      uuid
);
CREATE INDEX flow_marks_window ON flow_marks (schedule_id, kind, key, at);

-- A debounce or batch window in progress: the queued run gathering the key's events, since when,
-- and how many it holds. The window closes when its run is taken (a new event then opens another)
-- or, for a batch, when it is full.
CREATE TABLE flow_windows (
  schedule_id uuid NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('debounce', 'batch')),
  key         text NOT NULL,
  run_id      uuid NOT NULL,
  opened_at   timestamptz NOT NULL,
  events      integer NOT NULL CHECK (events >= 1),
  PRIMARY KEY (schedule_id, kind, key)
);

-- A throttled run carries its throttle: { "key": "<schedule id>/<key>", "limit", "periodMs" }. The
-- event that made it planned its start so that no window holds more than the limit; the claim
-- holds it to that with the starts as they happen ('start' marks), since a run started late
-- would otherwise crowd the next window.
ALTER TABLE runs ADD COLUMN throttle jsonb;
ALTER TABLE flow_marks DROP CONSTRAINT flow_marks_kind_check;
ALTER TABLE flow_marks ADD CONSTRAINT flow_marks_kind_check CHECK (kind IN ('rate', 'throttle', 'start'));

-- Which of these runs a claim at _at may start now under their throttles: per throttle key (its
-- advisory lock taken in one order), oldest due first, as many as the starts recorded within the
-- window before their start leave room for; each start is recorded. A run with no room is due
-- again once the window allows (THROTTLED), and its worker delays its job to then.
CREATE FUNCTION kairos_admit_throttled(_run_ids uuid[], _at timestamptz) RETURNS uuid[]
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  admitted uuid[] := ARRAY(SELECT r.id FROM runs r WHERE r.id = ANY(_run_ids) AND r.throttle IS NULL);
  k record;
  c record;
  started integer;
  start_at timestamptz;
  free_at timestamptz;
BEGIN
  FOR k IN
    SELECT DISTINCT r.schedule_id, r.throttle->>'key' AS key, (r.throttle->>'limit')::int AS lim, (r.throttle->>'periodMs')::bigint AS period_ms,
           hashtextextended('throttle/' || (r.throttle->>'key'), 0) AS lock_id
    FROM runs r WHERE r.id = ANY(_run_ids) AND r.throttle IS NOT NULL ORDER BY lock_id
  LOOP
    PERFORM pg_advisory_xact_lock(k.lock_id);
    FOR c IN
      SELECT r.id, r.available_at FROM runs r
      WHERE r.id = ANY(_run_ids) AND r.schedule_id = k.schedule_id AND r.throttle->>'key' = k.key ORDER BY r.available_at, r.id
    LOOP
      start_at := greatest(_at, c.available_at);
      -- A claim that began earlier may take the lock after one that began later and recorded a
      -- start after this one's: every start within a period either side shares a window with it.
      SELECT count(*) INTO started FROM flow_marks m
      WHERE m.schedule_id = k.schedule_id AND m.kind = 'start' AND m.key = k.key
        AND m.at > start_at - k.period_ms * interval '1 millisecond' AND m.at < start_at + k.period_ms * interval '1 millisecond';
      IF started < k.lim THEN
        INSERT INTO flow_marks (schedule_id, kind, key, at, run_id) VALUES (k.schedule_id, 'start', k.key, start_at, c.id);
        admitted := admitted || c.id;
      ELSE
        SELECT m.at + k.period_ms * interval '1 millisecond' INTO free_at FROM flow_marks m
        WHERE m.schedule_id = k.schedule_id AND m.kind = 'start' AND m.key = k.key
        ORDER BY m.at DESC OFFSET k.lim - 1 LIMIT 1;
        UPDATE runs r SET available_at = free_at, defer_reason = 'THROTTLED', updated_at = now() WHERE r.id = c.id;
      END IF;
    END LOOP;
    DELETE FROM flow_marks m WHERE m.schedule_id = k.schedule_id AND m.kind = 'start' AND m.key = k.key
      AND m.at < _at - 2 * k.period_ms * interval '1 millisecond';
  END LOOP;
  RETURN admitted;
END $$;
REVOKE ALL ON FUNCTION kairos_admit_throttled(uuid[], timestamptz) FROM PUBLIC;

-- The claim, with throttles: a throttled run the window has no room for is left out of the answer,
-- due again when the window allows. Otherwise as before.
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
