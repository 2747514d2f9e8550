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
