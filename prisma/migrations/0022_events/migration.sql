-- Events: what applications emit ("order.paid"), stored in the ledger. In the transaction that
-- stores an event, every schedule of its namespace whose `on` matches it gets its run, and every
-- durable function waiting for it (ctx.waitForEvent) is resumed with it: after a crash either the
-- event and all it started exist, or none of it does.
--
-- An event's id is the producer's (or a generated one): a repeat of an id within the retention
-- window (KAIROS_EVENT_RETENTION) answers the first event and starts nothing again.
CREATE TABLE events (
  namespace_id uuid NOT NULL REFERENCES namespaces (id),
  id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
  -- The order events were stored in: newest-first listings page on it.
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  name         text NOT NULL CHECK (name ~ '^[A-Za-z0-9._:-]{1,128}$'),
  data         json,
  received_at  timestamptz NOT NULL,
  sent_by      text NOT NULL,
  -- The runs it started, and the schedules it matched that made none: [{ scheduleId, reasonCode }].
  run_ids      uuid[] NOT NULL DEFAULT '{}',
  skipped      jsonb NOT NULL DEFAULT '[]',
  -- The waits it resumed: [runId, ...].
  resumed      uuid[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (namespace_id, id)
);
CREATE INDEX events_listing ON events (namespace_id, seq DESC);
CREATE INDEX events_by_name ON events (namespace_id, name, seq DESC);
-- A wait being recorded looks back over the events of its name received since its attempt began.
CREATE INDEX events_by_name_received ON events (namespace_id, name, received_at);
CREATE INDEX events_age ON events (received_at);

-- Schedules started by an event instead of the clock: kind 'event', with the event's name and
-- what its values must equal ({ "data.plan": "pro" }). They have no slots: next_fire_at stays null
-- while they are active.
ALTER TABLE schedules DROP CONSTRAINT schedules_kind_check;
ALTER TABLE schedules ADD CONSTRAINT schedules_kind_check CHECK (kind IN ('cron', 'every', 'at', 'event'));
ALTER TABLE schedules
  ADD COLUMN on_event text,
  ADD COLUMN on_match jsonb,
  ADD CONSTRAINT schedules_on_event CHECK ((kind = 'event') = (on_event IS NOT NULL));
ALTER TABLE schedules DROP CONSTRAINT schedules_check4;
ALTER TABLE schedules ADD CONSTRAINT schedules_active_fires CHECK (status <> 'active' OR next_fire_at IS NOT NULL OR kind = 'event');
-- The fan-out finds the listening schedules of an event by name: an event nobody listens to costs one insert.
CREATE INDEX schedules_on_event_name ON schedules (namespace_id, on_event) WHERE kind = 'event' AND deleted_at IS NULL;

-- A run an event started: origin 'event', and the event's id.
ALTER TABLE runs DROP CONSTRAINT runs_origin_check;
ALTER TABLE runs ADD CONSTRAINT runs_origin_check CHECK (origin IN ('schedule', 'manual', 'retry', 'backfill', 'republish', 'sensor', 'event'));
ALTER TABLE runs ADD COLUMN event_id text;

-- ctx.waitForEvent: checkpoint kind 'event'. While its run waits, a row here says for which event
-- (name, match over the event) and since when; the event that matches it deletes the row, stores
-- itself as the checkpoint's result and queues the run again.
ALTER TABLE run_checkpoints DROP CONSTRAINT run_checkpoints_kind_check;
ALTER TABLE run_checkpoints ADD CONSTRAINT run_checkpoints_kind_check CHECK (kind IN ('step', 'sleep', 'signal', 'event'));
CREATE TABLE event_waits (
  run_id       uuid NOT NULL,
  checkpoint   text NOT NULL,
  namespace_id uuid NOT NULL,
  name         text NOT NULL,
  match        jsonb NOT NULL DEFAULT '{}',
  since        timestamptz NOT NULL,
  PRIMARY KEY (run_id, checkpoint)
);
CREATE INDEX event_waits_by_name ON event_waits (namespace_id, name);

-- The lock that orders a wait being recorded with the events of its name being stored: a wait
-- takes it exclusively, an event's transaction shared. An event stored first is committed (and
-- seen by the wait's look back) before the wait is recorded; one stored after sees the wait.
-- Names share 64 locks (the two-key advisory locks of class 1262835284, 'KEVT'), so a batch of a
-- thousand names holds at most 64 of the server's lock slots; two names that share one only order
-- a wait of one after an event of the other.
CREATE FUNCTION kairos_event_lock(_namespace uuid, _name text) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT (hashtextextended('event/' || _namespace || '/' || _name, 0) & 63)::integer $$;

-- The shared locks of the names of events being stored, in one order.
CREATE FUNCTION kairos_lock_event_names(_namespace uuid, _names text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  l integer;
BEGIN
  FOR l IN SELECT DISTINCT kairos_event_lock(_namespace, n) FROM unnest(_names) AS n ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock_shared(1262835284, l);
  END LOOP;
END $$;

-- True when every entry of _match ({ "data.plan": "pro" }) equals, as JSON, the value of _event
-- ({ id, name, data, receivedAt }) at its dotted path. A missing path never matches.
CREATE FUNCTION kairos_event_matches(_event jsonb, _match jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(bool_and(coalesce(_event #> string_to_array(m.key, '.') = m.value, false)), true) FROM jsonb_each(_match) m
$$;

-- An instant as the API writes it: UTC, ISO 8601 with Z, milliseconds only when there are some.
CREATE FUNCTION kairos_instant_text(_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
         || CASE WHEN to_char(_at AT TIME ZONE 'UTC', 'MS') = '000' THEN '' ELSE '.' || to_char(_at AT TIME ZONE 'UTC', 'MS') END || 'Z'
$$;

-- ctx.waitForEvent(name, { match, timeout }): the event that resumed this wait (delivered), or, once
-- the wait's timeout has passed, timed_out; else the run parks waiting (its lease released, its
-- epoch raised, due at the timeout, or never without one). A first wait looks back for a matching
-- event it has not had yet, received since the run's progress before the wait: its latest checkpoint
-- before this one, or its first start (or _since, the start of the attempt that asks, when earlier):
-- an event sent while the run was on its way to the wait, in this attempt or in one that was lost
-- before recording the wait, is not missed. `lost` when the lease was.
CREATE FUNCTION kairos_worker.await_event(_run_id uuid, _epoch bigint, _owner text, _checkpoint text, _name text,
                                          _match jsonb, _since timestamptz, _timeout_at timestamptz)
RETURNS TABLE (outcome text, body json, "wakeAt" timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  ns uuid;
  since timestamptz;
  waited run_checkpoints;
  found_event events;
  view json;
  due timestamptz;
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  SELECT r.namespace_id, r.started_at INTO ns, since FROM runs r
  WHERE r.id = _run_id AND r.lease_epoch = _epoch AND r.lease_owner = _owner AND r.state = 'running' FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'lost'::text, NULL::json, NULL::timestamptz;
    RETURN;
  END IF;
  -- To the millisecond an event's receivedAt is written with, never later than now.
  since := date_trunc('milliseconds', least(_since, now(), coalesce(
             (SELECT max(coalesce(c.finished_at, c.started_at)) FROM run_checkpoints c WHERE c.run_id = _run_id AND c.name <> _checkpoint), since)));
  SELECT * INTO waited FROM run_checkpoints c WHERE c.run_id = _run_id AND c.name = _checkpoint;
  IF FOUND AND waited.state = 'received' THEN
    RETURN QUERY SELECT 'received'::text, waited.result, NULL::timestamptz;
    RETURN;
  END IF;
  IF NOT FOUND THEN
    PERFORM pg_advisory_xact_lock(1262835284, kairos_event_lock(ns, _name));
    SELECT * INTO found_event FROM events e
    WHERE e.namespace_id = ns AND e.name = _name AND e.received_at >= since AND NOT _run_id = ANY(e.resumed)
      AND kairos_event_matches(jsonb_build_object('id', e.id, 'name', e.name, 'data', e.data::jsonb), coalesce(_match, '{}'))
    ORDER BY e.received_at, e.seq LIMIT 1;
    IF FOUND THEN
      view := json_build_object('id', found_event.id, 'name', found_event.name, 'data', found_event.data,
                                'receivedAt', kairos_instant_text(found_event.received_at));
      INSERT INTO run_checkpoints (run_id, name, kind, state, result, lease_epoch, finished_at)
      VALUES (_run_id, _checkpoint, 'event', 'received', view, _epoch, now());
      UPDATE events e SET resumed = e.resumed || _run_id WHERE e.namespace_id = ns AND e.id = found_event.id;
      RETURN QUERY SELECT 'received'::text, view, NULL::timestamptz;
      RETURN;
    END IF;
  END IF;
  due := CASE WHEN waited.run_id IS NOT NULL THEN waited.wake_at ELSE _timeout_at END;
  IF due IS NOT NULL AND due <= now() THEN
    INSERT INTO run_checkpoints (run_id, name, kind, state, lease_epoch, finished_at, wake_at)
    VALUES (_run_id, _checkpoint, 'event', 'timed_out', _epoch, now(), due)
    ON CONFLICT (run_id, name) DO UPDATE SET state = 'timed_out', finished_at = now();
    DELETE FROM event_waits w WHERE w.run_id = _run_id AND w.checkpoint = _checkpoint;
    RETURN QUERY SELECT 'timed_out'::text, NULL::json, due;
    RETURN;
  END IF;
  UPDATE runs r SET state = 'waiting', lease_epoch = r.lease_epoch + 1, lease_owner = NULL, lease_expires_at = NULL,
         available_at = coalesce(due, 'infinity'), enqueued_at = CASE WHEN due IS NULL THEN NULL ELSE now() END, updated_at = now()
  WHERE r.id = _run_id;
  INSERT INTO run_checkpoints (run_id, name, kind, state, lease_epoch, wake_at)
  VALUES (_run_id, _checkpoint, 'event', 'waiting', _epoch, due)
  ON CONFLICT (run_id, name) DO NOTHING;
  INSERT INTO event_waits (run_id, checkpoint, namespace_id, name, match, since)
  VALUES (_run_id, _checkpoint, ns, _name, coalesce(_match, '{}'), since)
  ON CONFLICT (run_id, checkpoint) DO NOTHING;
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, detail)
  VALUES (_run_id, 'awaiting_event', 'running', 'waiting', _epoch + 1, _owner,
          jsonb_build_object('event', _name, 'match', coalesce(_match, '{}'), 'timeoutAt', due));
  RETURN QUERY SELECT 'parked'::text, NULL::json, due;
END $$;

REVOKE ALL ON FUNCTION kairos_worker.await_event(uuid, bigint, text, text, text, jsonb, timestamptz, timestamptz) FROM PUBLIC;

-- A parked run cancelled before it started ends as a queued one does; a wait for an event goes with it.
CREATE OR REPLACE FUNCTION kairos_worker.cancel_queued_run(_run_id uuid, _actor text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  WITH done AS (
    UPDATE runs SET state = 'cancelled', reason_code = 'CANCELLED_BY_USER', held_at = NULL,
           reason_text = 'cancelled before it started', finished_at = now(), updated_at = now()
    WHERE id = _run_id AND state IN ('queued', 'sleeping', 'waiting') AND cancel_requested_at IS NOT NULL
    RETURNING id, lease_epoch
  ), unwaited AS (
    DELETE FROM event_waits w USING done d WHERE w.run_id = d.id
  )
  INSERT INTO run_events (run_id, kind, from_state, to_state, lease_epoch, actor, reason_code)
  SELECT id, 'cancelled', 'queued', 'cancelled', lease_epoch, _actor, 'CANCELLED_BY_USER' FROM done;
  RETURN FOUND;
END $$;

-- Protocol version 4: await_event.
CREATE OR REPLACE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 1, 4 $$;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 4 $$;

DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.await_event(uuid, bigint, text, text, text, jsonb, timestamptz, timestamptz) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;
