-- Concurrency keys, queue limits and sensors.
--
-- A run may hold a concurrency key ("customer-42", resolved from its declaration's template over
-- its payload when it is created) with a limit: at most that many runs holding the key are running
-- at once in its namespace. A queue of a namespace may have limits (queue_limits): at most
-- max_running of its runs running at once, at most rate_max starts in any window of rate_per_ms.
-- Both are decided in the database when a run is claimed, under an advisory lock per key and per
-- limited queue, so two workers never both take the last place. A run a limit holds back stays
-- active, held (held_at, defer_reason the limit's code), with no job in the transport; a place that
-- frees releases the oldest held runs (a trigger on the run that leaves `running`), and the
-- scheduler hands them over as soon as the release commits (NOTIFY kairos_released).
ALTER TABLE runs
  ADD COLUMN concurrency_key   text,
  ADD COLUMN concurrency_limit integer,
  ADD COLUMN held_at           timestamptz,
  -- Set by the claim: whether the run took a place (a key's or a limited queue's) that its end frees.
  ADD COLUMN holds_place       boolean NOT NULL DEFAULT false,
  -- How many times a limit held it back: a released run travels as a new job (<id>-h<count>).
  ADD COLUMN hold_count        integer NOT NULL DEFAULT 0,
  -- A sensor's runs: its evaluations (run_key null) and the runs they asked for (by run key).
  ADD COLUMN sensor_id         uuid,
  ADD COLUMN run_key           text,
  ADD CONSTRAINT runs_concurrency CHECK ((concurrency_key IS NULL) = (concurrency_limit IS NULL) AND coalesce(concurrency_limit, 1) >= 1),
  ADD CONSTRAINT runs_held CHECK (held_at IS NULL OR (state IN ('queued', 'sleeping', 'waiting') AND enqueued_at IS NULL)),
  ADD CONSTRAINT runs_held_reason CHECK (held_at IS NULL OR defer_reason IN ('CONCURRENCY_LIMIT', 'QUEUE_LIMIT', 'QUEUE_RATE_LIMIT')),
  ADD CONSTRAINT runs_run_key_of_sensor CHECK (run_key IS NULL OR sensor_id IS NOT NULL);

ALTER TABLE runs DROP CONSTRAINT runs_origin_check;
ALTER TABLE runs ADD CONSTRAINT runs_origin_check CHECK (origin IN ('schedule', 'manual', 'retry', 'backfill', 'republish', 'sensor'));

ALTER TABLE schedules ADD COLUMN concurrency jsonb;

CREATE INDEX runs_active_by_key ON runs (namespace_id, concurrency_key) WHERE state IN ('queued', 'running') AND concurrency_key IS NOT NULL;
-- A graph's own run is running while its steps are, and holds no place: its steps do.
CREATE INDEX runs_running_by_queue ON runs (namespace_id, (coalesce(target->>'queue', 'default'))) WHERE state = 'running' AND target->>'type' <> 'steps';
CREATE INDEX runs_held_by_key ON runs (namespace_id, concurrency_key, available_at, id)
  WHERE held_at IS NOT NULL AND defer_reason = 'CONCURRENCY_LIMIT';
CREATE INDEX runs_held_by_queue ON runs (namespace_id, (coalesce(target->>'queue', 'default')), available_at, id)
  WHERE held_at IS NOT NULL AND defer_reason IN ('QUEUE_LIMIT', 'QUEUE_RATE_LIMIT');
-- The relay's list: active runs to hand over (a released run may be one its durable function parked).
CREATE INDEX runs_undispatched ON runs (available_at)
  WHERE state IN ('queued', 'sleeping', 'waiting') AND enqueued_at IS NULL AND held_at IS NULL;
CREATE INDEX runs_by_sensor ON runs (sensor_id, id DESC) WHERE sensor_id IS NOT NULL;

CREATE TABLE queue_limits (
  namespace_id uuid NOT NULL REFERENCES namespaces (id),
  queue        text NOT NULL,
  max_running  integer CHECK (max_running >= 1),
  rate_max     integer CHECK (rate_max >= 1),
  rate_per_ms  bigint CHECK (rate_per_ms >= 1),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  updated_by   text NOT NULL,
  PRIMARY KEY (namespace_id, queue),
  CHECK ((rate_max IS NULL) = (rate_per_ms IS NULL))
);

-- The starts of rate-limited queues, stamped with their claim's now() (older rows are pruned by the claim).
CREATE TABLE queue_starts (
  namespace_id uuid NOT NULL,
  queue        text NOT NULL,
  started_at   timestamptz NOT NULL,
  run_id       uuid NOT NULL
);
CREATE INDEX queue_starts_window ON queue_starts (namespace_id, queue, started_at);

-- Advisory lock keys: one per concurrency key and one per limited queue of a namespace.
CREATE FUNCTION kairos_key_lock(_namespace uuid, _key text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('key/' || _namespace || '/' || _key, 0) $$;
CREATE FUNCTION kairos_queue_lock(_namespace uuid, _queue text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('queue/' || _namespace || '/' || _queue, 0) $$;

-- Takes the advisory locks of the keys and limited queues of these runs, in one order (the lock
-- ids'), so that transactions taking several never wait on each other in a cycle: the claim before
-- it decides, a batch of verdicts before the places it frees are released.
CREATE FUNCTION kairos_lock_places(_run_ids uuid[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  lock_id bigint;
BEGIN
  FOR lock_id IN
    SELECT DISTINCT l FROM (
      SELECT kairos_key_lock(r.namespace_id, r.concurrency_key) AS l FROM runs r
      WHERE r.id = ANY(_run_ids) AND r.concurrency_key IS NOT NULL
      UNION
      SELECT kairos_queue_lock(r.namespace_id, ql.queue) FROM runs r
      JOIN queue_limits ql ON ql.namespace_id = r.namespace_id AND ql.queue = coalesce(r.target->>'queue', 'default')
      WHERE r.id = ANY(_run_ids)
    ) locks ORDER BY l
  LOOP
    PERFORM pg_advisory_xact_lock(lock_id);
  END LOOP;
END $$;

-- Which of these runs a claim may take now, and whether each takes a place its end frees. The
-- caller holds the advisory lock of every key and limited queue involved (kairos_lock_places)
-- to the end of its transaction, so the counts read here cannot change under it; _at is the
-- instant it took them, which stamps the starts. Runs are admitted
-- oldest due first; a run is held back when the places of its key are taken (running runs, runs
-- admitted before it in this call, and older held runs of the key, which go first), or those of
-- its queue, or its queue's rate window is full. Held runs are marked (held_at, defer_reason,
-- enqueued_at null: their job is dropped) with a `held` event the first time.
CREATE FUNCTION kairos_admit(_run_ids uuid[], _at timestamptz)
RETURNS TABLE (id uuid, holds_place boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  c record;
  lim queue_limits;
  key_running jsonb := '{}';
  queue_running jsonb := '{}';
  queue_started jsonb := '{}';
  k text;
  q text;
  older integer;
  reason text;
  held_ids uuid[] := '{}';
  held_reasons text[] := '{}';
  limited_queues boolean := EXISTS (SELECT 1 FROM queue_limits);
BEGIN
  FOR c IN
    SELECT r.id, r.namespace_id, r.concurrency_key, r.concurrency_limit, coalesce(r.target->>'queue', 'default') AS queue,
           r.available_at, r.held_at
    FROM runs r
    WHERE r.id = ANY(_run_ids) AND r.state IN ('queued', 'sleeping', 'waiting') AND r.available_at <= now() + interval '20 milliseconds'
      AND r.cancel_requested_at IS NULL AND r.target->>'type' <> 'steps'
    ORDER BY r.available_at, r.id
  LOOP
    reason := NULL;
    k := c.namespace_id || '/' || c.concurrency_key;
    q := c.namespace_id || '/' || c.queue;
    IF c.concurrency_key IS NOT NULL THEN
      IF NOT key_running ? k THEN
        key_running := key_running || jsonb_build_object(k,
          (SELECT count(*) FROM runs a WHERE a.namespace_id = c.namespace_id AND a.concurrency_key = c.concurrency_key AND a.state = 'running'
             AND a.target->>'type' <> 'steps'));
      END IF;
      IF (key_running->>k)::integer >= c.concurrency_limit THEN
        reason := 'CONCURRENCY_LIMIT';
      ELSE
        SELECT count(*) INTO older FROM (
          SELECT 1 FROM runs h
          WHERE h.namespace_id = c.namespace_id AND h.concurrency_key = c.concurrency_key AND h.held_at IS NOT NULL
            AND h.defer_reason = 'CONCURRENCY_LIMIT' AND (h.available_at, h.id) < (c.available_at, c.id) AND NOT h.id = ANY(_run_ids)
          LIMIT c.concurrency_limit) o;
        IF (key_running->>k)::integer + older >= c.concurrency_limit THEN
          reason := 'CONCURRENCY_LIMIT';
        END IF;
      END IF;
    END IF;
    lim := NULL;
    IF limited_queues THEN
      SELECT * INTO lim FROM queue_limits l WHERE l.namespace_id = c.namespace_id AND l.queue = c.queue;
    END IF;
    IF reason IS NULL AND lim.queue IS NOT NULL AND lim.max_running IS NOT NULL THEN
      IF NOT queue_running ? q THEN
        queue_running := queue_running || jsonb_build_object(q,
          (SELECT count(*) FROM runs a WHERE a.namespace_id = c.namespace_id AND coalesce(a.target->>'queue', 'default') = c.queue AND a.state = 'running'
             AND a.target->>'type' <> 'steps'));
      END IF;
      SELECT count(*) INTO older FROM (
        SELECT 1 FROM runs h
        WHERE h.namespace_id = c.namespace_id AND coalesce(h.target->>'queue', 'default') = c.queue AND h.held_at IS NOT NULL
          AND h.defer_reason IN ('QUEUE_LIMIT', 'QUEUE_RATE_LIMIT') AND (h.available_at, h.id) < (c.available_at, c.id)
          AND NOT h.id = ANY(_run_ids)
        LIMIT lim.max_running) o;
      IF (queue_running->>q)::integer + older >= lim.max_running THEN
        reason := 'QUEUE_LIMIT';
      END IF;
    END IF;
    IF reason IS NULL AND lim.queue IS NOT NULL AND lim.rate_max IS NOT NULL THEN
      IF NOT queue_started ? q THEN
        -- Starts are stamped _at, the instant the claim took its locks (its runs' started_at), which
        -- rises in the order claims take the queue's lock: every start recorded before this one
        -- counts if it lies within the window before _at, so no window of rate_per_ms holds more
        -- than rate_max starts. Rows are pruned a minute past the window.
        DELETE FROM queue_starts s WHERE s.namespace_id = c.namespace_id AND s.queue = c.queue
          AND s.started_at < _at - lim.rate_per_ms * interval '1 millisecond' - interval '1 minute';
        queue_started := queue_started || jsonb_build_object(q,
          (SELECT count(*) FROM queue_starts s WHERE s.namespace_id = c.namespace_id AND s.queue = c.queue
             AND s.started_at > _at - lim.rate_per_ms * interval '1 millisecond'));
      END IF;
      IF (queue_started->>q)::integer >= lim.rate_max THEN
        reason := 'QUEUE_RATE_LIMIT';
      END IF;
    END IF;

    IF reason IS NULL THEN
      IF c.concurrency_key IS NOT NULL THEN
        key_running := jsonb_set(key_running, ARRAY[k], to_jsonb((key_running->>k)::integer + 1));
      END IF;
      IF queue_running ? q THEN
        queue_running := jsonb_set(queue_running, ARRAY[q], to_jsonb((queue_running->>q)::integer + 1));
      END IF;
      IF queue_started ? q THEN
        queue_started := jsonb_set(queue_started, ARRAY[q], to_jsonb((queue_started->>q)::integer + 1));
        INSERT INTO queue_starts (namespace_id, queue, started_at, run_id) VALUES (c.namespace_id, c.queue, _at, c.id);
      END IF;
      id := c.id;
      holds_place := c.concurrency_key IS NOT NULL OR (lim.queue IS NOT NULL AND lim.max_running IS NOT NULL);
      RETURN NEXT;
    ELSE
      held_ids := held_ids || c.id;
      held_reasons := held_reasons || reason;
    END IF;
  END LOOP;

  IF cardinality(held_ids) > 0 THEN
    WITH h AS (
      SELECT * FROM unnest(held_ids, held_reasons) AS h(id, reason)
    ), marked AS (
      UPDATE runs r SET held_at = coalesce(r.held_at, now()), defer_reason = h.reason, enqueued_at = NULL, updated_at = now(),
             hold_count = r.hold_count + CASE WHEN r.held_at IS NULL THEN 1 ELSE 0 END
      FROM h WHERE r.id = h.id
      RETURNING r.id, r.state, r.lease_epoch, h.reason,
                (SELECT o.held_at IS NULL FROM runs o WHERE o.id = r.id) AS newly
    )
    INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code, detail)
    SELECT m.id, 'held', m.state, m.state, m.lease_epoch, 'limits', NULL, jsonb_build_object('deferReason', m.reason)
    FROM marked m WHERE m.newly;
  END IF;
END $$;

-- Runs just created that their key has no place for, held at once rather than handed to the
-- transport, whose claims would only be refused: a due run is held when the runs of its key
-- running or on their way to a claim (queued, due, not held), with the new ones before it, fill
-- its limit, or when older runs of its key are held (they go first). Takes the keys' locks, as a
-- claim does. Answers the runs it held.
CREATE FUNCTION kairos_hold_new(_run_ids uuid[])
RETURNS TABLE (id uuid)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  c record;
  taken jsonb := '{}';
  k text;
  held_ids uuid[] := '{}';
BEGIN
  PERFORM kairos_lock_places(_run_ids);
  FOR c IN
    SELECT r.id, r.namespace_id, r.concurrency_key, r.concurrency_limit, r.available_at FROM runs r
    WHERE r.id = ANY(_run_ids) AND r.concurrency_key IS NOT NULL AND r.state = 'queued' AND r.available_at <= now()
      AND r.target->>'type' <> 'steps'
    ORDER BY r.available_at, r.id
  LOOP
    k := c.namespace_id || '/' || c.concurrency_key;
    IF NOT taken ? k THEN
      taken := taken || jsonb_build_object(k, (
        SELECT count(*) FROM runs a
        WHERE a.namespace_id = c.namespace_id AND a.concurrency_key = c.concurrency_key AND NOT a.id = ANY(_run_ids)
          AND a.target->>'type' <> 'steps' AND (a.state = 'running' OR (a.state = 'queued' AND a.held_at IS NULL AND a.available_at <= now()))));
      IF EXISTS (SELECT 1 FROM runs h WHERE h.namespace_id = c.namespace_id AND h.concurrency_key = c.concurrency_key
                 AND h.held_at IS NOT NULL AND h.defer_reason = 'CONCURRENCY_LIMIT') THEN
        taken := jsonb_set(taken, ARRAY[k], to_jsonb(2147483647));
      END IF;
    END IF;
    IF (taken->>k)::bigint >= c.concurrency_limit THEN
      held_ids := held_ids || c.id;
    ELSE
      taken := jsonb_set(taken, ARRAY[k], to_jsonb((taken->>k)::bigint + 1));
    END IF;
  END LOOP;
  IF cardinality(held_ids) > 0 THEN
    WITH marked AS (
      UPDATE runs r SET held_at = now(), defer_reason = 'CONCURRENCY_LIMIT', enqueued_at = NULL, hold_count = r.hold_count + 1
      WHERE r.id = ANY(held_ids)
      RETURNING r.id, r.lease_epoch
    )
    INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
    SELECT m.id, 'held', 'queued', 'queued', m.lease_epoch, 'limits', jsonb_build_object('deferReason', 'CONCURRENCY_LIMIT') FROM marked m;
  END IF;
  RETURN QUERY SELECT unnest(held_ids);
END $$;

-- Releases the oldest runs held for the key _key (or the queue _queue) of namespace _namespace, as
-- many as there are places free: each is due again and handed over by the scheduler's relay, which
-- the NOTIFY wakes. Takes the key's (or queue's) advisory lock, as the claim does, so a run held by
-- a claim that committed before is seen here, and a claim after sees the place this frees.
CREATE FUNCTION kairos_release_held(_namespace uuid, _key text, _queue text, _actor text)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  lim queue_limits;
  free integer;
  released integer := 0;
  released_ids text;
  lowest integer;
BEGIN
  IF _key IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(kairos_key_lock(_namespace, _key));
    SELECT min(h.concurrency_limit) INTO lowest FROM (
      SELECT r.concurrency_limit FROM runs r
      WHERE r.namespace_id = _namespace AND r.concurrency_key = _key AND r.held_at IS NOT NULL AND r.defer_reason = 'CONCURRENCY_LIMIT'
      ORDER BY r.available_at, r.id LIMIT 1) h;
    IF lowest IS NULL THEN
      RETURN 0;
    END IF;
    free := lowest - (SELECT count(*) FROM runs a WHERE a.namespace_id = _namespace AND a.concurrency_key = _key AND a.state = 'running'
                                                  AND a.target->>'type' <> 'steps');
    IF free <= 0 THEN
      RETURN 0;
    END IF;
    WITH next AS (
      SELECT r.id FROM runs r
      WHERE r.namespace_id = _namespace AND r.concurrency_key = _key AND r.held_at IS NOT NULL AND r.defer_reason = 'CONCURRENCY_LIMIT'
      ORDER BY r.available_at, r.id LIMIT free
      FOR UPDATE SKIP LOCKED
    ), freed AS (
      UPDATE runs r SET held_at = NULL, defer_reason = NULL, updated_at = now() FROM next WHERE r.id = next.id
      RETURNING r.id, r.state, r.lease_epoch
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT f.id, 'released', f.state, f.state, f.lease_epoch, _actor, jsonb_build_object('concurrencyKey', _key) FROM freed f
    )
    SELECT count(*), string_agg(id::text, ',') INTO released, released_ids FROM freed;
  ELSE
    PERFORM pg_advisory_xact_lock(kairos_queue_lock(_namespace, _queue));
    SELECT * INTO lim FROM queue_limits l WHERE l.namespace_id = _namespace AND l.queue = _queue;
    free := 1000;
    IF lim.max_running IS NOT NULL THEN
      free := least(free, lim.max_running - (SELECT count(*) FROM runs a
                                             WHERE a.namespace_id = _namespace AND coalesce(a.target->>'queue', 'default') = _queue AND a.state = 'running'
                                               AND a.target->>'type' <> 'steps'));
    END IF;
    IF lim.rate_max IS NOT NULL THEN
      free := least(free, lim.rate_max - (SELECT count(*) FROM queue_starts s
                                          WHERE s.namespace_id = _namespace AND s.queue = _queue
                                            AND s.started_at > clock_timestamp() - lim.rate_per_ms * interval '1 millisecond'));
    END IF;
    IF free <= 0 THEN
      RETURN 0;
    END IF;
    WITH next AS (
      SELECT r.id FROM runs r
      WHERE r.namespace_id = _namespace AND coalesce(r.target->>'queue', 'default') = _queue AND r.held_at IS NOT NULL
        AND r.defer_reason IN ('QUEUE_LIMIT', 'QUEUE_RATE_LIMIT')
      ORDER BY r.available_at, r.id LIMIT free
      FOR UPDATE SKIP LOCKED
    ), freed AS (
      UPDATE runs r SET held_at = NULL, defer_reason = NULL, updated_at = now() FROM next WHERE r.id = next.id
      RETURNING r.id, r.state, r.lease_epoch
    ), event AS (
      INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
      SELECT f.id, 'released', f.state, f.state, f.lease_epoch, _actor, jsonb_build_object('queue', _queue) FROM freed f
    )
    SELECT count(*), string_agg(id::text, ',') INTO released, released_ids FROM freed;
  END IF;
  IF released > 0 THEN
    -- Remembered for the rest of the transaction: a worker whose verdicts freed the places hands
    -- these runs over itself (finish_runs_v3); the relay, woken, takes whatever it did not.
    PERFORM set_config('kairos.released', concat_ws(',', nullif(current_setting('kairos.released', true), ''), released_ids), true);
    PERFORM pg_notify('kairos_released', '');
  END IF;
  RETURN released;
END $$;

-- A run that took a place and leaves `running` (its verdict, a retry, a park, a drain, a hand-back,
-- the reaper, a cancellation) frees it: whoever makes the change releases what it held back.
CREATE FUNCTION kairos_place_freed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  IF NEW.concurrency_key IS NOT NULL THEN
    PERFORM kairos_release_held(NEW.namespace_id, NEW.concurrency_key, NULL, 'limits');
  END IF;
  IF EXISTS (SELECT 1 FROM queue_limits l WHERE l.namespace_id = NEW.namespace_id AND l.queue = coalesce(NEW.target->>'queue', 'default')) THEN
    PERFORM kairos_release_held(NEW.namespace_id, NULL, coalesce(NEW.target->>'queue', 'default'), 'limits');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER runs_place_freed AFTER UPDATE OF state ON runs FOR EACH ROW
  WHEN (OLD.state = 'running' AND NEW.state <> 'running' AND OLD.holds_place)
  EXECUTE FUNCTION kairos_place_freed();

-- A held run that ends without starting (cancelled, its schedule deleted) is no longer held,
-- whichever statement ends it.
CREATE FUNCTION kairos_unhold() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.held_at := NULL;
  RETURN NEW;
END $$;

CREATE TRIGGER runs_unhold BEFORE UPDATE OF state ON runs FOR EACH ROW
  WHEN (NEW.held_at IS NOT NULL AND NEW.state NOT IN ('queued', 'sleeping', 'waiting', 'running'))
  EXECUTE FUNCTION kairos_unhold();

-- The claim, with limits: runs held back by a key or their queue are left out of the answer (and
-- marked held); the others are claimed as before, and remember whether they took a place.
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
             started_at = coalesce(started_at, claimed_at), updated_at = now(),
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
    LEFT JOIN schedules s ON s.id = coalesce(c.schedule_id, g.schedule_id);
END $$;

-- Verdicts and retries of runs that took places lock those places first, in the claim's order:
-- the releases their ends make then never wait in a cycle with a claim. Otherwise as before.
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
      RETURNING r.id, r.namespace_id, r.schedule_id, r.state, v.reason_code, v.reason_text
    ), dead_letter AS (
      INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
      SELECT d.namespace_id, 'run.dead', d.id,
             jsonb_build_object('runId', d.id, 'scheduleId', d.schedule_id, 'reasonCode', d.reason_code, 'reasonText', d.reason_text)
      FROM done d WHERE d.state = 'dead'
    )
    SELECT d.id FROM done d;
END $$;

CREATE OR REPLACE FUNCTION kairos_worker.retry_runs(_owner text, _retries json)
RETURNS TABLE (id uuid, "availableAt" timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  IF EXISTS (SELECT 1 FROM kairos_worker.credentials c WHERE c.role_name = session_user::text) THEN
    PERFORM kairos_worker.require_runs(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_retries) v));
  END IF;
  IF EXISTS (SELECT 1 FROM runs r WHERE r.id = ANY(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_retries) v)) AND r.holds_place) THEN
    PERFORM kairos_lock_places(ARRAY(SELECT (v->>'id')::uuid FROM json_array_elements(_retries) v));
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

-- Protocol version 3: finish_runs_v3 writes the verdicts as finish_runs does and answers, beside
-- the ids written, the runs the places they freed released (marked handed over), for the worker
-- to hand to the transport at once: a freed place is taken without waiting for the relay.
CREATE OR REPLACE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 1, 3 $$;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 3 $$;

CREATE FUNCTION kairos_worker.finish_runs_v3(_owner text, _verdicts json)
RETURNS TABLE (id uuid, released boolean, "availableAt" timestamptz, queue text, "jobId" text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  PERFORM set_config('kairos.released', '', true);
  RETURN QUERY SELECT f.id, false, NULL::timestamptz, NULL::text, NULL::text FROM kairos_worker.finish_runs(_owner, _verdicts) f;
  IF current_setting('kairos.released', true) = '' THEN
    RETURN;
  END IF;
  -- Only runs the caller may hand over (its namespace and queues); the relay takes the rest.
  RETURN QUERY
    UPDATE runs r SET enqueued_at = now()
    WHERE r.id = ANY(string_to_array(current_setting('kairos.released', true), ',')::uuid[])
      AND r.enqueued_at IS NULL AND r.held_at IS NULL AND r.state IN ('queued', 'sleeping', 'waiting')
      AND (scope IS NULL OR (r.namespace_id = scope.namespace_id AND coalesce(r.target->>'queue', 'default') = ANY(scope.queues)))
    RETURNING r.id, true, r.available_at, coalesce(r.target->>'queue', 'default'), CASE WHEN r.hold_count > 0 THEN r.id || '-h' || r.hold_count END;
END $$;

REVOKE ALL ON FUNCTION kairos_worker.finish_runs_v3(text, json) FROM PUBLIC;

DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.finish_runs_v3(text, json) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;

-- A held run is not due until a place frees: its worker drops the job (dueInMs null), and the
-- release hands over a new one.
CREATE OR REPLACE FUNCTION kairos_worker.run_snapshot(_run_id uuid)
RETURNS TABLE (state text, "dueInMs" float8, "cancelRequested" boolean, "leaseExpiresInMs" float8)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  RETURN QUERY
    SELECT r.state,
           CASE WHEN r.available_at = 'infinity' OR r.held_at IS NOT NULL THEN NULL
                ELSE (extract(epoch FROM r.available_at - now()) * 1000)::float8 END,
           r.cancel_requested_at IS NOT NULL,
           (extract(epoch FROM r.lease_expires_at - now()) * 1000)::float8
    FROM runs r WHERE r.id = _run_id;
END $$;

-- A held run cancelled before it started ends as a queued one does; its hold goes with it.
CREATE OR REPLACE FUNCTION kairos_worker.cancel_queued_run(_run_id uuid, _actor text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH done AS (
    UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER', held_at = NULL,
           reason_text = 'cancelled before it started', finished_at = now(), updated_at = now()
    WHERE id = _run_id AND state IN ('queued', 'sleeping', 'waiting') AND cancel_requested_at IS NOT NULL
    RETURNING id, lease_epoch
  )
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code)
  SELECT id, 'cancelled', 'queued', 'cancelled', lease_epoch, _actor, 'CANCELLED_BY_USER' FROM done;
  RETURN FOUND;
END $$;

-- A held run's mark is the release's to clear: undoing an enqueued mark leaves it alone.
CREATE OR REPLACE FUNCTION kairos_worker.mark_undispatched(_run_ids uuid[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(_run_ids);
  UPDATE runs SET enqueued_at = NULL WHERE id = ANY(_run_ids) AND state IN ('queued', 'sleeping', 'waiting') AND held_at IS NULL;
END $$;

-- Sensors: a handler evaluated every `every_ms` on the workers, as a run of its own (sensor_id set,
-- run_key null), with the sensor's cursor. What it answers (the runs it asks for by run key, and
-- the new cursor) is committed by the scheduler in one transaction with the evaluation's tick, only
-- if the cursor version read when the evaluation started still holds; sensor_run_keys makes a
-- replay of an evaluation ask for nothing new. One evaluation at a time: evaluation_run_id.
CREATE TABLE sensors (
  id                 uuid PRIMARY KEY,
  namespace_id       uuid NOT NULL REFERENCES namespaces (id),
  name               text NOT NULL,
  every_ms           bigint NOT NULL CHECK (every_ms >= 1000),
  -- The evaluation: a handler target, its timeout.
  target             jsonb NOT NULL,
  timeout_ms         bigint NOT NULL CHECK (timeout_ms > 0),
  -- The runs it asks for: {"target" | "steps", "retry", "timeoutMs", "concurrency"}.
  run                jsonb NOT NULL,
  payload            json,
  labels             jsonb NOT NULL DEFAULT '{}',
  paused             boolean NOT NULL DEFAULT false,
  cursor             jsonb,
  cursor_version     bigint NOT NULL DEFAULT 0,
  next_evaluation_at timestamptz NOT NULL DEFAULT now(),
  evaluation_run_id  uuid,
  source             text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (namespace_id, name)
);
CREATE INDEX sensors_due ON sensors (next_evaluation_at) WHERE NOT paused AND evaluation_run_id IS NULL;
CREATE INDEX sensors_listing ON sensors (namespace_id, id DESC);

CREATE TABLE sensor_ticks (
  id                uuid PRIMARY KEY,
  sensor_id         uuid NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
  evaluation_run_id uuid NOT NULL,
  state             text NOT NULL CHECK (state IN ('evaluating', 'succeeded', 'failed', 'skipped')),
  cursor_version    bigint NOT NULL,
  cursor_before     jsonb,
  cursor_after      jsonb,
  requested         integer NOT NULL DEFAULT 0,
  created           integer NOT NULL DEFAULT 0,
  deduplicated      integer NOT NULL DEFAULT 0,
  run_ids           uuid[] NOT NULL DEFAULT '{}',
  reason_code       text,
  reason_text       text,
  started_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz,
  CHECK ((state = 'evaluating') = (finished_at IS NULL))
);
CREATE INDEX sensor_ticks_by_sensor ON sensor_ticks (sensor_id, started_at DESC, id DESC);
CREATE INDEX sensor_ticks_evaluating ON sensor_ticks (started_at) WHERE state = 'evaluating';

CREATE TABLE sensor_run_keys (
  sensor_id  uuid NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
  run_key    text NOT NULL,
  run_id     uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (sensor_id, run_key)
);

-- An evaluation that ends wakes the scheduler's sensor loop.
CREATE FUNCTION kairos_evaluation_ended() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM pg_notify('kairos_sensors', NEW.sensor_id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER runs_evaluation_ended AFTER UPDATE OF state ON runs FOR EACH ROW
  WHEN (NEW.sensor_id IS NOT NULL AND NEW.run_key IS NULL AND NEW.state IN ('succeeded', 'failed', 'cancelled', 'dead')
        AND OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION kairos_evaluation_ended();

REVOKE ALL ON FUNCTION kairos_admit(uuid[], timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_lock_places(uuid[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_hold_new(uuid[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_release_held(uuid, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_place_freed() FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_evaluation_ended() FROM PUBLIC;
